#include "reports/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>

#include "reports/report_json.h"
#include "reports/root_causes.h"
#include "results/text.h"

namespace sampcert::reports {
namespace {

using nlohmann::json;
using results::Status;
using results::TestResult;

std::string E(std::string_view s) { return HtmlEscape(s); }

std::string Text(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return "";
  return j.dump();
}

std::string StatusClass(Status s) {
  switch (s) {
    case Status::kPass: return "pass";
    case Status::kWarning: return "warn";
    case Status::kNotSupported: return "muted";
    case Status::kKnownFailure: return "known";
    case Status::kInconclusive: return "inconclusive";
    case Status::kFail:
    case Status::kCrash:
    case Status::kTimeout: return "fail";
  }
  return "fail";
}

std::string Anchor(const std::string& property, const std::string& dtype) {
  std::string a = "r-" + property + "-" + dtype;
  for (char& c : a) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  }
  return a;
}

std::string Num(double v, const char* fmt_spec = "{:.3g}") {
  if (std::isnan(v)) return "–";
  return fmt::format(fmt::runtime(fmt_spec), v);
}

// Observed against expected counts per cell, cells in the test's order: paired bars on a log
// scale (counts below 0.1 drawn at 0.1: an observed 0 shows as no bar above the axis), with
// both axes, tick labels at each power of ten and every few cells, titles and a legend. Where
// the test knows what each cell counts (a token, a probability band), every bar's title names
// it and the (at most 3) most deviating cells are named above their bars and in the caption.
std::string CountsChart(const TestResult& r) {
  if (r.observed.empty() || r.observed.size() != r.expected.size()) return "";
  const std::size_t n = std::min<std::size_t>(r.observed.size(), 80);
  double top = 1;
  for (std::size_t i = 0; i < n; ++i) top = std::max({top, r.observed[i], r.expected[i]});
  constexpr double kFloor = -1;  // log10 of the axis' bottom, 0.1
  const double ceiling = std::max(1.0, std::ceil(std::log10(top)));
  const double left = 56, right = 12, above = 10, below = 40, plot_w = 640, plot_h = 170;
  const double w = left + plot_w + right, h = above + plot_h + below;
  const double bw = plot_w / static_cast<double>(n);
  auto y_of = [&](double count) {
    const double l = std::clamp(std::log10(std::max(count, 0.1)), kFloor, ceiling);
    return above + plot_h * (1 - (l - kFloor) / (ceiling - kFloor));
  };
  const double base = above + plot_h;
  const bool named = r.cells.size() == r.observed.size();
  auto name = [&](std::size_t i) {
    return named ? fmt::format("cell {} ({})", i, E(r.cells[i])) : fmt::format("cell {}", i);
  };
  std::string svg;
  for (int e = static_cast<int>(kFloor); e <= static_cast<int>(ceiling); ++e) {
    const double y = y_of(std::pow(10.0, e));
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"/><text "
        "class=\"lbl\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
        left, left + plot_w, y, left - 4, y + 3,
        e < 0 ? "0.1" : fmt::format("{:.0f}", std::pow(10.0, e)));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double x = left + static_cast<double>(i) * bw;
    const double ye = y_of(r.expected[i]), yo = y_of(r.observed[i]);
    svg += fmt::format(
        "<rect class=\"exp\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"><title>"
        "{}: expected {:.1f}</title></rect><rect class=\"obs\" x=\"{:.1f}\" y=\"{:.1f}\" "
        "width=\"{:.1f}\" height=\"{:.1f}\"><title>{}: observed {:.0f}</title></rect>",
        x, ye, bw * 0.45, base - ye, name(i), r.expected[i], x + bw * 0.5, yo, bw * 0.45, base - yo,
        name(i), r.observed[i]);
    const std::size_t every = n <= 16 ? 1 : (n + 15) / 16;
    if (i % every == 0) {
      svg += fmt::format(
          "<text class=\"lbl\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}"
          "</text>",
          x + bw / 2, base + 13, i);
    }
  }
  svg += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/><line class=\"axis\" "
      "x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\"/>"
      "<text class=\"lbl\" x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">cell, in the test's "
      "order</text><text class=\"lbl\" transform=\"translate(12 {6}) rotate(-90)\" "
      "text-anchor=\"middle\">draws (log scale)</text>"
      "<rect class=\"obs\" x=\"{7}\" y=\"{8}\" width=\"10\" height=\"8\"/><text class=\"lbl\" "
      "x=\"{9}\" y=\"{10}\">observed</text><rect class=\"exp\" x=\"{11}\" y=\"{8}\" width=\"10\" "
      "height=\"8\"/><text class=\"lbl\" x=\"{12}\" y=\"{10}\">expected</text>",
      left, above, base, left + plot_w, left + plot_w / 2, h - 6, above + plot_h / 2,
      left + plot_w - 150, h - 14, left + plot_w - 136, h - 7, left + plot_w - 70,
      left + plot_w - 56);
  // The most deviating cells are marked above their bars: by their label where it is short (a
  // token), else by a number the caption resolves; marks are staggered so neighbours stay
  // legible.
  std::string deviating;
  if (named) {
    int k = 0;
    for (std::size_t i :
         results::MostDeviatingCells(std::span(r.observed).first(n), r.expected, 3)) {
      ++k;
      const std::string mark = r.cells[i].size() <= 12 ? r.cells[i] : fmt::format("#{}", k);
      const double x = left + static_cast<double>(i) * bw + bw / 2;
      const double y = std::min(y_of(r.expected[i]), y_of(r.observed[i])) - 3 - 11.0 * (k - 1);
      const char* anchor = x > left + plot_w - 40 ? "end" : x < left + 40 ? "start" : "middle";
      svg += fmt::format(
          "<text class=\"lbl name\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>", x,
          std::max(y, above + 8), anchor, E(mark));
      deviating += fmt::format(
          "{}{}{} ({:.0f} drawn, {:.1f} expected)", deviating.empty() ? "; most deviating: " : ", ",
          mark == r.cells[i] ? "" : mark + " ", E(r.cells[i]), r.observed[i], r.expected[i]);
    }
  }
  return fmt::format(
      "<figure><svg class=\"chart counts\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"observed against expected draws per cell\">{}</svg><figcaption>Observed "
      "against expected draws per cell, log scale{}{}.</figcaption></figure>",
      w, h, svg,
      r.observed.size() > n ? fmt::format(", first {} of {} cells", n, r.observed.size()) : "",
      deviating);
}

// The step of a numeric axis from 0 to `top`: 1, 2 or 5 times a power of ten, 3 to 6 ticks.
double AxisStep(double top) {
  const double raw = top / 4;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * decade >= raw) return m * decade;
  }
  return 10 * decade;
}

// Horizontal bars: the TV each distribution test detects with probability 0.9 on a numeric axis,
// and the profile's target as a labelled line. Green: the test reaches the target; grey: a
// screen; red only for a test that falls short of a promise.
std::string PowerChart(const Report& report) {
  std::vector<const TestResult*> tests;
  for (const TestResult& r : report.results) {
    if (!std::isnan(r.power_tv) && r.power_tv > 0) tests.push_back(&r);
  }
  if (tests.empty()) return "<p>No distribution tests ran.</p>";
  const double required = TargetTv(report);
  double top = required * 1.5;
  for (const TestResult* r : tests) top = std::max(top, r->power_tv);
  const double step = AxisStep(top);
  top = std::ceil(top / step - 1e-9) * step;
  const double w = 640, row = 14, label = 220, plot = w - label - 10;
  const double bars_h = row * static_cast<double>(tests.size());
  const double h = bars_h + 44;
  std::string bars;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const TestResult& r = *tests[i];
    const double y = static_cast<double>(i) * row;
    const double len = plot * r.power_tv / top;
    const bool screen = IsScreen(r, required);
    const char* cls = r.power_tv <= required ? "bar" : screen ? "bar screen" : "bar bad";
    bars += fmt::format(
        "<text x=\"0\" y=\"{:.1f}\" class=\"lbl\">{} {} {}{}</text><rect class=\"{}\" x=\"{}\" "
        "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"><title>detects TV {:.3g} with {} draws{}"
        "</title></rect>",
        y + row - 3, E(r.property), E(r.dtype), E(r.family), screen ? " (screen)" : "", cls, label,
        y + 2, len, row - 4, r.power_tv, r.draws, screen ? ": a screen, short of the target" : "");
  }
  // The axis: a baseline, ticks with their values, and its title.
  bars +=
      fmt::format("<line x1=\"{0}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"axis\"/>",
                  label, label + plot, bars_h + 2);
  for (double t = 0; t <= top + step / 2; t += step) {
    const double x = label + plot * t / top;
    bars += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" class=\"axis\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" class=\"lbl tick\">{4:.3g}</text>",
        x, bars_h + 2, bars_h + 6, bars_h + 16, t);
  }
  bars += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"lbl tick\">total variation detected with "
      "probability 0.9</text>",
      label + plot / 2, bars_h + 28);
  const double rx = label + plot * required / top;
  bars += fmt::format(
      "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" y2=\"{1:.1f}\" class=\"req\"/><text "
      "x=\"{0:.1f}\" y=\"{2:.1f}\" class=\"lbl req-label\">target TV {3:.3g}</text>",
      rx, bars_h + 2, h - 2, required);
  return fmt::format(
      "<figure><svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"power per "
      "test\">{}</svg><figcaption>Smallest total variation each test detects with probability "
      "0.9 (shorter is stronger), against the profile's target (the dashed line). Green: the "
      "test reaches the target. Grey, marked (screen): a test whose power is stated, not "
      "required (a screen, SPEC section 11): it found no deviation at that power and certifies "
      "no distribution claim. Red: a test that falls short of a promise.</figcaption></figure>",
      w, h, bars);
}

// PROB-1's worst error (relative to allowed) against temperature, one point per row family.
std::string TemperatureChart(const Report& report) {
  std::vector<std::pair<double, double>> pts;
  std::vector<std::string> labels;
  for (const TestResult& r : report.results) {
    if (r.property != "PROB-1" || std::isnan(r.worst_temperature) || r.worst_temperature <= 0) {
      continue;
    }
    pts.emplace_back(std::log10(r.worst_temperature), r.worst_error);
    labels.push_back(r.dtype + " " + r.family);
  }
  if (pts.empty())
    return "<p>No probability checks ran (the sampler reports no probabilities).</p>";
  // Both axes logarithmic: T from 1e-46 to 1e39, the error ratio from 1e-3 to 1e3 (clipped).
  const double w = 640, h = 200, lo = -46, hi = 39;
  auto ypos = [h](double ratio) {
    const double l = std::clamp(std::log10(std::max(ratio, 1e-300)), -3.0, 3.0);
    return h - 20 - (h - 30) * (l + 3) / 6;
  };
  std::string dots;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double x = 30 + (w - 40) * (pts[i].first - lo) / (hi - lo);
    dots += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" class=\"{}\"><title>{}: T = 1e{:.1f}, worst "
        "error {:.3g} of allowed</title></circle>",
        x, ypos(pts[i].second), pts[i].second <= 1 ? "dot" : "dot bad", E(labels[i]), pts[i].first,
        pts[i].second);
  }
  const double y1 = ypos(1.0);
  return fmt::format(
      "<figure><svg class=\"chart\" viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"error "
      "against temperature\"><line x1=\"30\" x2=\"{0}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
      "class=\"req\"/><text x=\"32\" y=\"{3:.1f}\" class=\"lbl\">allowed</text><text x=\"2\" "
      "y=\"14\" class=\"lbl\">1e3</text><text x=\"2\" y=\"{4:.1f}\" class=\"lbl\">1e-3</text>"
      "<text x=\"30\" y=\"{1}\" class=\"lbl\">T = 1e-45</text><text x=\"{5}\" y=\"{1}\" "
      "class=\"lbl\">1e38</text>{6}</svg><figcaption>PROB-1: worst probability error, relative to "
      "the tolerance table's allowance (log scale, clipped to 1e-3..1e3), against the temperature "
      "of the row that produced it (log scale).</figcaption></figure>",
      w, h, y1, y1 - 3, h - 22, w - 40, dots);
}

// Edge-case coverage: generated cases per tag, over the valid (RANGE-1) and invalid
// (INV-ERR-1) rows, which together see every generated case once.
std::string CoverageChart(const Report& report) {
  std::map<std::string, uint64_t> tags;
  for (const TestResult& r : report.results) {
    if (r.property != "RANGE-1" && r.property != "INV-ERR-1") continue;
    for (const auto& [tag, n] : r.coverage) {
      // The coverage model's tags have their own section (CoverageSection).
      const std::string_view t = tag;
      if (t.starts_with(results::kCoverageClassTag) ||
          t.starts_with(results::kCoverageExcludedTag)) {
        continue;
      }
      tags[tag] += n;
    }
  }
  if (tags.empty()) return "<p>No generated rows in this report.</p>";
  uint64_t top = 1;
  for (const auto& [tag, n] : tags) top = std::max(top, n);
  const double w = 640, row = 14, label = 200;
  const double h = row * static_cast<double>(tags.size());
  std::string bars;
  std::size_t i = 0;
  for (const auto& [tag, n] : tags) {
    const double y = static_cast<double>(i++) * row;
    bars += fmt::format(
        "<text x=\"0\" y=\"{:.1f}\" class=\"lbl\">{}</text><rect class=\"bar\" x=\"{}\" "
        "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"><title>{} cases</title></rect>",
        y + row - 3, E(tag), label, y + 2,
        (w - label - 40) * static_cast<double>(n) / static_cast<double>(top), row - 4, n);
  }
  return fmt::format(
      "<figure><svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"edge-case "
      "coverage\">{}</svg><figcaption>Generated rows per edge case (all dtypes).</figcaption>"
      "</figure>",
      w, h, bars);
}

// The coverage model's table (SPEC COV-1), one line per axis: each class the design rows
// exercised with its rows (the properties and their rows on hover), then the excluded classes
// grouped by the declaration's reason.
// SPEC TRACE-1: each clause with its evidence, the words this run exercised in bold, the others
// muted; a clause no planned input decides says why.
std::string ClauseSection(const Report& report) {
  if (report.clauses.empty()) return "<p>This report carries no traceability table.</p>";
  std::string html =
      "<p>Each promise of SPEC.md with the planned inputs on which a violation is decisive "
      "(<strong>bold</strong>: exercised in this run; muted: not in this run's plan, for "
      "example an undeclared capability).</p>\n<table id=\"clauses\"><tr><th>clause</th>"
      "<th>promise</th><th>evidence</th></tr>\n";
  std::size_t exercised = 0;
  for (const ClauseLine& c : report.clauses) {
    std::string words;
    bool any = false;
    for (const std::string& w : c.evidence) {
      const bool ran = EvidenceExercised(report, w);
      any = any || ran;
      words += fmt::format("{}<code{}>{}</code>", words.empty() ? "" : " ",
                           ran ? " class=\"ran\"" : " class=\"muted\"", E(w));
    }
    if (c.evidence.empty()) words = "<em>not exercised</em>: " + E(c.not_exercised);
    exercised += any ? 1 : 0;
    html +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", E(c.id), E(c.promise), words);
  }
  return fmt::format("<p>{} of {} clauses exercised by this run.</p>\n", exercised,
                     report.clauses.size()) +
         html + "</table>\n";
}

std::string CoverageSection(const Report& report) {
  const std::vector<CoverageCell> cells = CoverageTable(report.results);
  if (cells.empty()) return "<p>No design rows in this report.</p>";
  std::map<std::string, std::string> exercised;
  std::map<std::string, std::map<std::string, std::string>> excluded;  // axis, reason: classes
  for (const CoverageCell& c : cells) {
    if (c.rows_by_property.empty()) {
      std::string& classes = excluded[c.axis][c.excluded];
      classes += (classes.empty() ? "" : ", ") + E(c.cls);
      continue;
    }
    uint64_t rows = 0;
    std::string title;
    for (const auto& [property, n] : c.rows_by_property) {
      rows = std::max(rows, n);
      title += fmt::format("{}{}: {} rows", title.empty() ? "" : ", ", property, n);
    }
    exercised[c.axis] +=
        fmt::format("{}<span title=\"{}\">{}&nbsp;&times;{}</span>",
                    exercised[c.axis].empty() ? "" : " ", E(title), E(c.cls), rows);
  }
  std::set<std::string> axes;
  for (const CoverageCell& c : cells) axes.insert(c.axis);
  std::string html =
      "<table class=\"coverage\"><tr><th>axis</th><th>exercised: class &times;rows (the "
      "properties on hover)</th><th>excluded by the declaration</th></tr>\n";
  for (const std::string& axis : axes) {
    std::string why;
    for (const auto& [reason, classes] : excluded[axis]) {
      why += fmt::format("{}{}: {}", why.empty() ? "" : "<br>", E(reason), classes);
    }
    html += fmt::format("<tr><th>{}</th><td>{}</td><td class=\"muted\">{}</td></tr>\n", E(axis),
                        exercised[axis], why);
  }
  return html + "</table>\n";
}

// The top of the page: each root cause (root_causes.h) with its count, where it shows, its
// lead's message, whole input (the row file, complete and bit-exact) and one-line reproduction.
std::string RootCauseSection(const Report& report) {
  const std::vector<RootCause> causes = RootCauses(report.results);
  const std::size_t not_reached = NotReached(report.results);
  if (causes.empty() && not_reached == 0) return "";
  std::string html = fmt::format(
      "<h2 id=\"root-causes\">Root causes ({})</h2>\n<ol class=\"causes\">\n", causes.size());
  for (const RootCause& g : causes) {
    std::string dtypes, families;
    for (const std::string& d : g.dtypes) dtypes += (dtypes.empty() ? "" : ", ") + E(d);
    for (std::size_t i = 0; i < g.families.size() && i < 6; ++i) {
      families += (i == 0 ? "" : ", ") + E(g.families[i]);
    }
    if (g.families.size() > 6) families += fmt::format(" and {} more", g.families.size() - 6);
    html += fmt::format(
        "<li><p><strong>{}</strong> <span class=\"st {}\">{}</span> &times;{}: {}<br><small>{}; "
        "{}</small></p>\n<p>{}</p>\n",
        E(g.property), StatusClass(g.status), results::StatusName(g.status), g.results.size(),
        E(g.message_class), dtypes, families, E(g.message));
    if (!g.input.empty()) html += fmt::format("<p>Input: <code>{}</code></p>", E(g.input));
    if (!g.row_file.empty()) {
      // A name of [A-Za-z0-9._-] only (RowFileName), beside this page.
      html += fmt::format(
          "<p>Whole input: <a href=\"{0}\">{0}</a> (<code>sampcert reference --row {0}</code>)"
          "</p>",
          E(g.row_file));
    }
    if (!g.reproduction.empty()) {
      html += fmt::format("<p>Reproduce: <code>{}</code></p>", E(g.reproduction));
    }
    html += "</li>\n";
  }
  html += "</ol>\n";
  if (not_reached > 0) {
    html += fmt::format(
        "<p>{} more failing results were not reached because an earlier check of their case "
        "failed (listed below).</p>\n",
        not_reached);
  }
  return html;
}

// One failure's drill-down: its message, inputs, row file, reproduction, statistics and chart.
std::string FailureDetails(const TestResult& r) {
  const bool known = r.known_failure.has_value();
  std::string html = fmt::format(
      "<details class=\"failure{}\"><summary><strong>{}</strong> {} [{}] {}: {}</summary>\n",
      known ? " known" : "",
      known ? fmt::format("KnownFailure ({})", results::StatusName(r.known_failure->status))
            : results::StatusName(r.status),
      E(r.property), E(r.dtype), E(r.family), E(r.failure ? r.failure->message : r.note));
  if (known) {
    html += fmt::format("<p>Known failure, pinned by the expectations file: {}</p>",
                        E(r.known_failure->reason));
  }
  if (r.failure) {
    html += fmt::format("<p>Input as generated: <code>{}</code></p>", E(r.failure->input));
    if (!r.failure->minimal_input.empty()) {
      html += fmt::format("<p>Minimal input: <code>{}</code></p>", E(r.failure->minimal_input));
    }
    if (!r.failure->row_file.empty()) {
      // A name of [A-Za-z0-9._-] only (RowFileName), beside this page.
      html += fmt::format(
          "<p>Complete input: <a href=\"{0}\">{0}</a> (replay: <code>sampcert reference "
          "--row {0}</code>)</p>",
          E(r.failure->row_file));
    }
    if (!r.failure->reproduction.empty()) {
      html += fmt::format("<p>Reproduce: <code>{}</code></p>", E(r.failure->reproduction));
    }
  }
  if (!std::isnan(r.p_value)) {
    html +=
        fmt::format("<p>p = {}, level {}, {} draws.</p>", Num(r.p_value), Num(r.level), r.draws);
  }
  return html + CountsChart(r) + "</details>\n";
}

// The failures no expectation pins, then the known ones: a known failure is listed as what it
// is, never dropped and never counted as none.
std::string FailureSections(const Report& report) {
  std::string fresh, known;
  int n_fresh = 0, n_known = 0;
  for (const TestResult& r : report.results) {
    if (r.status == Status::kKnownFailure) {
      ++n_known;
      known += FailureDetails(r);
    } else if (!results::IsConformant(r.status)) {
      ++n_fresh;
      fresh += FailureDetails(r);
    }
  }
  std::string html = "<h2>Failures</h2>\n";
  if (n_fresh == 0) {
    html += n_known == 0 ? "<p>None.</p>\n" : "<p>No failure beyond the known ones (below).</p>\n";
  }
  html += fresh;
  if (n_known > 0) {
    html += fmt::format(
        "<h2 id=\"known-failures\">Known failures ({})</h2>\n<p>Failures the expectations file "
        "pins, each with its reason: the sampler still fails them.</p>\n{}",
        n_known, known);
  }
  return html;
}

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}
.verdict{font-size:1.3em;font-weight:bold;padding:.4em .8em;display:inline-block;border-radius:4px}
.verdict.ok{background:#d9f2dc;color:#135c1c}.verdict.bad{background:#fbdcdc;color:#8a1414}
.verdict.known{background:#fde6c8;color:#7a4100}.verdict.partial{background:#e3ecf7;color:#1d3f6e}
.verdict.incomplete{background:#ece3fb;color:#4b2a7a}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}
td.pass{background:#e6f6e8}td.fail{background:#fbdcdc}td.warn{background:#fff4d6}
td.inconclusive{background:#ece3fb}td.muted{background:#f3f3f3;color:#777}code.muted{color:#888}
td.known{background:#fde6c8;color:#7a4100}
code,pre{background:#f6f6f6;padding:1px 4px;white-space:pre-wrap;word-break:break-all}
details{margin:.4em 0;border:1px solid #eee;padding:.3em .6em}summary{cursor:pointer}
svg.chart{width:100%;height:auto;background:#fcfcfc;border:1px solid #eee}
.obs{fill:#3366aa}.exp{fill:#b8c8e6}.bar{fill:#4a8f5a}.bar.bad{fill:#c44}.bar.screen{fill:#9a9a9a}code.ran{font-weight:bold}.axis{stroke:#666}.tick{text-anchor:middle}.dot{fill:#3366aa}
.dot.bad{fill:#c44}.req{stroke:#225;stroke-dasharray:4 3}.req-label{fill:#225}.lbl{font-size:10px;fill:#444}.lbl.name{font-weight:bold;fill:#222}
.axis{stroke:#444}.grid{stroke:#e4e4e4}
#only-failures:checked ~ table tr.ok{display:none}
ol.causes>li{margin:.6em 0}ol.causes p{margin:.2em 0}.st{padding:0 .4em;border-radius:3px}
.st.fail{background:#fbdcdc}.st.inconclusive{background:#ece3fb}
)";

}  // namespace

std::string HtmlEscape(std::string_view text) {
  // Sanitized first: the page declares UTF-8, and a sampler's bytes need not be; bidirectional
  // controls become visible text, so a name cannot reorder the title or the verdict around it,
  // and so do C0 and C1 controls, so `cat report.html` cannot drive a terminal.
  const std::string valid = results::VisibleControls(text);
  std::string out;
  out.reserve(valid.size());
  for (char c : valid) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderHtml(const Report& report) {
  const json& c = report.context;
  const json& s = report.sampler;
  const Outcome outcome = Verdict(report);
  std::string html;
  html += fmt::format(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>sampcert report: "
      "{}</title><style>{}</style></head><body>\n",
      E(Text(s.value("name", json("?")))), kStyle);
  html += fmt::format(
      "<h1>sampcert conformance report</h1>\n<p>Sampler <strong id=\"sampler-name\">{}</strong> "
      "version {} (<code>{}</code>)</p>\n<p id=\"verdict\" class=\"verdict {}\">{}</p>\n",
      E(Text(s.value("name", json("?")))), E(Text(s.value("version", json("?")))),
      E(Text(s.value("argument", json("")))), Info(outcome.kind).css, E(outcome.text));
  std::map<std::string, int> counts;
  for (const TestResult& r : report.results) ++counts[results::StatusName(r.status)];
  std::string count_text;
  for (const auto& [k, n] : counts) count_text += fmt::format("{} {}, ", n, k);
  html += fmt::format("<p>{} results: {}</p>\n", report.results.size(), E(count_text));
  // Beside the verdict, never part of it (SPEC REPORT-3).
  if (const std::string speed = SpeedLine(report); !speed.empty()) {
    html += fmt::format("<p id=\"speed\">{}</p>\n", E(speed));
  }
  if (!report.expectation_differences.empty()) {
    html += fmt::format(
        "<details id=\"differences\" open><summary><strong>{} differences from the "
        "expectations file</strong></summary><ul>",
        report.expectation_differences.size());
    for (const ExpectationDifference& d : report.expectation_differences) {
      html += fmt::format("<li>{}</li>", E(d.text));
    }
    html += "</ul></details>\n";
  }
  html += RootCauseSection(report);

  html +=
      "<details id=\"run\"><summary><strong>Run, "
      "declarations</strong></summary><h2>Run</h2><table>";
  for (const char* k : {"profile", "seed", "shard", "jobs", "isolation", "time_budget_s", "seconds",
                        "false_alarm_budget", "required_tv", "tool_version", "git_revision",
                        "compiler", "cpu", "expectations", "expectations_strict"}) {
    if (c.contains(k)) html += fmt::format("<tr><th>{}</th><td>{}</td></tr>", k, E(Text(c[k])));
  }
  html += "</table>\n<h2>Declared capabilities and policies</h2><table>";
  std::string caps;
  for (const json& cap : s.value("capabilities", json::array())) caps += Text(cap) + " ";
  html += fmt::format("<tr><th>capabilities</th><td>{}</td></tr>", E(caps));
  const json policies = s.value("policies", json::object());  // outlives the loop's proxy
  for (const auto& [k, v] : policies.items()) {
    html += fmt::format("<tr><th>{}</th><td>{}</td></tr>", E(k), E(Text(v)));
  }
  html += fmt::format("<tr><th>thread_safe</th><td>{}</td></tr></table></details>\n",
                      E(Text(s.value("thread_safe", json(false)))));

  // The matrix.
  const auto agg = Aggregate(report.results);
  std::set<std::string> props, dtypes;
  for (const auto& [key, st] : agg) {
    props.insert(key.first);
    dtypes.insert(key.second);
  }
  html += "<h2>Properties by dtype</h2><table id=\"matrix\"><tr><th>property</th>";
  for (const std::string& d : dtypes) html += fmt::format("<th>{}</th>", E(d));
  html += "</tr>";
  for (const std::string& p : props) {
    html += fmt::format("<tr><th>{}</th>", E(p));
    for (const std::string& d : dtypes) {
      auto it = agg.find({p, d});
      if (it == agg.end()) {
        html += "<td class=\"muted\">–</td>";
      } else {
        html += fmt::format("<td class=\"{}\"><a href=\"#{}\">{}</a></td>", StatusClass(it->second),
                            Anchor(p, d), results::StatusName(it->second));
      }
    }
    html += "</tr>";
  }
  html += "</table>\n";

  html += FailureSections(report);

  html += "<h2>Power of the distribution tests</h2>\n" + PowerChart(report);
  html += "<h2>Error against temperature</h2>\n" + TemperatureChart(report);
  html += "<h2>Edge-case coverage</h2>\n" + CoverageChart(report);
  html += "<h2>Coverage model</h2>\n" + CoverageSection(report);
  html += "<h2>Promises and their evidence</h2>\n" + ClauseSection(report);

  html +=
      "<h2>All results</h2>\n<input type=\"checkbox\" id=\"only-failures\"> <label "
      "for=\"only-failures\">only what is not a pass</label>\n<table id=\"results\"><tr>"
      "<th>property</th><th>dtype</th><th>family</th><th>status</th><th>cases</th><th>worst "
      "error</th><th>p</th><th>level</th><th>power TV</th><th>draws</th><th>s</th><th>note"
      "</th></tr>\n";
  std::string last_anchor;
  const double required = TargetTv(report);
  for (const TestResult& r : report.results) {
    const std::string anchor = Anchor(r.property, r.dtype);
    const bool first = anchor != last_anchor;
    last_anchor = anchor;
    html += fmt::format(
        "<tr class=\"{}\"{}><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td>"
        "<td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}"
        "</td></tr>\n",
        r.status == Status::kPass ? "ok" : "", first ? " id=\"" + anchor + "\"" : "", E(r.property),
        E(r.dtype), E(r.family), StatusClass(r.status),
        std::string(results::StatusName(r.status)) + (IsScreen(r, required) ? " (screen)" : ""),
        r.cases, E(r.worst_input), Num(r.worst_error), Num(r.p_value), Num(r.level),
        Num(r.power_tv), r.draws, Num(r.seconds, "{:.2f}"), E(r.note));
  }
  html += "</table>\n";
  // The one script: marks the page as rendered (the browser test looks for it) and lets the
  // failure filter also open every failure.
  html +=
      "<script>\"use strict\";document.getElementById(\"only-failures\").addEventListener("
      "\"change\",function(e){for(const d of document.querySelectorAll(\"details.failure\"))"
      "d.open=e.target.checked;});document.body.setAttribute(\"data-rendered\",\"yes\");"
      "</script>\n</body></html>\n";
  return html;
}

}  // namespace sampcert::reports
