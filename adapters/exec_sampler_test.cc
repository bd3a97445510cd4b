// exec: samplers on the C++ side: the command-line splitting, the slot limit, and a handle used
// across fork() (the runner's workers): the worker gets its own child and the same draws.
#include "adapters/exec_sampler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "adapters/sampler.h"

namespace sampcert::adapters {
namespace {

using Words = std::vector<std::string>;

Words Split(const std::string& s) {
  auto r = SplitCommandLine(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.error().message;
  return r.ok() ? *r : Words{};
}

TEST(SplitCommandLine, WordsAndQuotesWithoutAShell) {
  EXPECT_EQ(Split("python3  my_sampler.py\t--x=1"), (Words{"python3", "my_sampler.py", "--x=1"}));
  EXPECT_EQ(Split("python3 'a b.py' \"c \\\"d\\\" $e\" f\\ g"),
            (Words{"python3", "a b.py", "c \"d\" $e", "f g"}));
  EXPECT_EQ(Split("x '' y"), (Words{"x", "", "y"}));
  EXPECT_EQ(Split("a#b c~d"), (Words{"a#b", "c~d"}));  // '#' and '~' inside a word are literal
}

TEST(SplitCommandLine, ShellSyntaxAndBadQuotesAreRefused) {
  for (const char* bad : {"a | b", "a; b", "a > out", "echo $HOME", "a && b", "*.py", "'open",
                          "\"open", "trailing\\", "   "}) {
    auto r = SplitCommandLine(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  auto r = SplitCommandLine("python3 s.py | tee x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("sh -c"), std::string::npos) << r.error().message;
}

TEST(ExecSampler, AtMostSixteenOpenAtOnce) {
  std::vector<LoadedPlugin> open;
  for (int i = 0; i < 16; ++i) {
    auto p = OpenExecSampler("true");  // starts nothing until get_info
    ASSERT_TRUE(p.ok()) << i;
    open.push_back(*p);
  }
  auto extra = OpenExecSampler("true");
  ASSERT_FALSE(extra.ok());
  open.pop_back();  // a slot comes back when its program is released
  EXPECT_TRUE(OpenExecSampler("true").ok());
}

TEST(ExecSampler, NotAProtocolServerIsAnErrorNotAHang) {
  auto p = OpenExecSampler("true");  // exits at once without a word
  ASSERT_TRUE(p.ok());
  auto s = Sampler::Open(p->api, p->library);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("exited with status 0"), std::string::npos) << s.error().message;
}

// A Python child running `body` after `import numpy as np; import sampcert.protocol as sp` (the
// source tree's helper), opened as a sampler; the error of opening it otherwise.
Expected<std::unique_ptr<Sampler>> OpenPythonChild(const std::string& python,
                                                   const std::string& body) {
  auto p = OpenExecSampler(python + " -c 'import sys; sys.path.insert(0, \"" + SOURCE_DIR +
                           "/python\"); import numpy as np; import sampcert.protocol as sp\n" +
                           body + "'");
  if (!p.ok()) return p.error();
  return Sampler::Open(p->api, p->library);
}

// The error of opening a Python child declaring `capability` besides f32 and speaking protocol
// 1.`minor`; "" when it opens.
std::string OpenPythonChildDeclaring(const std::string& python, const std::string& capability,
                                     int minor) {
  auto s = OpenPythonChild(python, "sp.PROTOCOL_MINOR = " + std::to_string(minor) +
                                       "; sp.serve(lambda *a: None, sp.Info(name=\"p\", "
                                       "capabilities=[\"f32\", \"" +
                                       capability + "\"]))");
  return s.ok() ? "" : s.error().message;
}

// An f32 row of `logits` (bit patterns) at the defaults.
RowView F32Row(const std::vector<uint32_t>& logits) {
  RowView row;
  row.dtype = DType::kF32;
  row.vocab = logits.size();
  row.logits = logits.data();
  return row;
}

// Protocol 1.4 sends no token history, no penalties and no row's seed, 1.5 no logit bias and no
// minimum length: a child of an older protocol declaring them is refused when it loads, never
// certified on rows it cannot read; a child of the protocol that carries them opens.
TEST(ExecSampler, AChildDeclaringWhatItsProtocolDoesNotCarryIsRefused) {
  const std::string python = NUMPY_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  for (const auto& [capability, minor] :
       {std::pair{"penalties", 5}, std::pair{"seeds", 5}, std::pair{"logit-bias", 6},
        std::pair{"min-tokens", 6}, std::pair{"logprobs-raw", 7}, std::pair{"logprobs-scaled", 7},
        std::pair{"logprobs-processed", 7}, std::pair{"packed-mask", 8}}) {
    const std::string error = OpenPythonChildDeclaring(python, capability, minor - 1);
    EXPECT_NE(
        error.find(fmt::format("declares {} but speaks protocol 1.{}", capability, minor - 1)),
        std::string::npos)
        << capability << ": " << error;
    EXPECT_NE(error.find(fmt::format("protocol 1.{}", minor)), std::string::npos) << error;
    EXPECT_EQ(OpenPythonChildDeclaring(python, capability, minor), "") << capability;
  }
  EXPECT_EQ(OpenPythonChildDeclaring(python, "mask", 4), "");  // the control: 1.4 carries masks
}

// Protocol 1.7 end to end: SAMPLE_LOGPROBS names the mode and top_n, and the child's four arrays
// come back into the ABI's outputs (the child answers its request back in them).
TEST(ExecSampler, APythonChildReturnsLogprobs) {
  const std::string python = NUMPY_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  auto s =
      OpenPythonChild(python,
                      "def sample(batch, seed, first, n, logprobs=None):\n"
                      "    rows = len(batch.rows)\n"
                      "    tok = np.tile(np.arange(n), (rows, 1))\n"
                      "    if logprobs is None:\n"
                      "        return tok\n"
                      "    mode = {\"raw\": 1, \"scaled\": 2, \"processed\": 3}[logprobs.mode]\n"
                      "    lp = -tok - 0.25 * mode\n"
                      "    top = np.tile(np.arange(logprobs.top_n)[::-1], (rows, 1))\n"
                      "    return tok, lp, top, np.full((rows, logprobs.top_n), -np.inf)\n"
                      "sp.serve(sample, sp.Info(name=\"l\", capabilities=[\"f32\", \"batch\", "
                      "\"logprobs-raw\", \"logprobs-scaled\"]))");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<uint32_t> logits(10, 0u);
  const Batch batch{DType::kF32, logits.size(), {F32Row(logits), F32Row(logits)}};
  auto got = (*s)->SampleLogprobs(batch, 1, 0, 3, SAMPCERT_LOGPROBS_SCALED, 2);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->tokens, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(got->logprobs, (std::vector<double>{-0.5, -1.5, -2.5, -0.5, -1.5, -2.5}));
  EXPECT_EQ(got->top_tokens, (std::vector<int64_t>{1, 0, 1, 0}));
  for (double lp : got->top_logprobs) EXPECT_EQ(lp, -std::numeric_limits<double>::infinity());
  // A mode it does not declare is refused at the host; a plain SAMPLE still works.
  auto processed = (*s)->SampleLogprobs(batch, 1, 0, 3, SAMPCERT_LOGPROBS_PROCESSED, 0);
  ASSERT_FALSE(processed.ok());
  EXPECT_EQ(processed.error().code, ErrorCode::kUnsupported);
  auto plain = (*s)->Sample(batch, 1, 0, 3);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(*plain, got->tokens);
}

// Protocol 1.5 end to end: the Python helper's Row gets the row's penalties, seed and history
// exactly (the child answers them back as tokens).
TEST(ExecSampler, APythonChildReadsThePenaltiesSeedAndHistory) {
  const std::string python = NUMPY_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  auto s = OpenPythonChild(
      python,
      "def sample(batch, seed, first, n):\n"
      "    r = batch.rows[0]\n"
      "    return np.array([[len(r.prompt_tokens), len(r.output_tokens), r.output_tokens[-1],\n"
      "        r.prompt_tokens[0], r.repetition_penalty * 10, r.presence_penalty * 10,\n"
      "        r.frequency_penalty * 10, r.seed, r.seed_mode, r.row_id]], dtype=np.int64)\n"
      "sp.serve(sample, sp.Info(name=\"h\", capabilities=[\"f32\", \"penalties\", "
      "\"seeds\"]))");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<uint32_t> logits(100, 0u);
  const std::vector<int64_t> prompt = {4, 9}, output = {1, 2, 5};
  RowView row = F32Row(logits);
  row.row_id = 3;
  row.repetition_penalty = 2.0f;
  row.presence_penalty = 0.5f;
  row.frequency_penalty = 1.5f;
  row.seed = 42;
  row.seed_mode = kSeedOwn;
  row.prompt_tokens = prompt.data();
  row.num_prompt_tokens = prompt.size();
  row.output_tokens = output.data();
  row.num_output_tokens = output.size();
  const Batch batch{DType::kF32, logits.size(), {row}};
  auto tokens = (*s)->Sample(batch, 1, 0, 10);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  EXPECT_EQ(*tokens, (std::vector<int64_t>{2, 3, 5, 4, 20, 5, 15, 42, kSeedOwn, 3}));
}

// Protocol 1.6 end to end: the Python helper's Row gets the row's logit bias (ids and values,
// -inf and a fraction exactly), its minimum length and its eos id; a row without them reads the
// defaults (empty lists, 0, 0).
TEST(ExecSampler, APythonChildReadsTheBiasAndMinimumLength) {
  const std::string python = NUMPY_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  auto s = OpenPythonChild(
      python,
      "def sample(batch, seed, first, n):\n"
      "    out = []\n"
      "    for r in batch.rows:\n"
      "        v = r.bias_values\n"
      "        out.append([len(r.bias_tokens), r.min_tokens, r.eos_token_id,\n"
      "            r.bias_tokens[0] if len(v) else -1, int(v[0] * 4) if len(v) else -1,\n"
      "            r.bias_tokens[-1] if len(v) else -1, int(np.isneginf(v[-1])) if len(v) else "
      "-1,\n"
      "            len(r.output_tokens)])\n"
      "    return np.array(out, dtype=np.int64)\n"
      "sp.serve(sample, sp.Info(name=\"b\", capabilities=[\"f32\", \"batch\", \"penalties\", "
      "\"logit-bias\", \"min-tokens\"]))");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<uint32_t> logits(50, 0u);
  const std::vector<int64_t> bias_tokens = {7, 3, 49}, output = {1};
  const std::vector<float> bias_values = {-2.25f, 0.5f, -std::numeric_limits<float>::infinity()};
  RowView row = F32Row(logits);
  row.bias_tokens = bias_tokens.data();
  row.bias_values = bias_values.data();
  row.num_bias = bias_tokens.size();
  row.min_tokens = 5;
  row.eos_token_id = 11;
  row.output_tokens = output.data();
  row.num_output_tokens = output.size();
  const Batch batch{DType::kF32, logits.size(), {row, F32Row(logits)}};
  auto tokens = (*s)->Sample(batch, 1, 0, 8);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  EXPECT_EQ(*tokens, (std::vector<int64_t>{3, 5, 11, 7, -9, 49, 1, 1,  //
                                           0, 0, 0, -1, -1, -1, -1, 0}));
}

TEST(ExecSampler, AForkedProcessGetsItsOwnChildAndTheSameDraws) {
  const std::string python = NUMPY_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  auto p =
      OpenExecSampler(python + " " + SOURCE_DIR + "/adapters/python/examples/numpy_sampler.py");
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto s = Sampler::Open(p->api, p->library, "check-config=x");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<uint32_t> logits = {0x3f800000u, 0x40000000u, 0u, 0x40400000u};
  RowView row = F32Row(logits);
  row.row_id = 77;
  const Batch batch{DType::kF32, logits.size(), {row}};
  auto parent = (*s)->Sample(batch, 9, 0, 64);
  ASSERT_TRUE(parent.ok()) << parent.error().message;
  const pid_t pid = fork();
  if (pid == 0) {
    auto child = (*s)->Sample(batch, 9, 0, 64);
    _exit(child.ok() && *child == *parent ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // The parent's child was left alone by the fork.
  auto again = (*s)->Sample(batch, 9, 0, 64);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, *parent);
}

}  // namespace
}  // namespace sampcert::adapters
