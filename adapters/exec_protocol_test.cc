// The protocol's bytes against adapters/python/PROTOCOL.md: each ```hex NAME block of its
// "Examples, byte for byte" is read from the file itself, so the document and the host cannot
// drift apart; then malformed replies, each refused with its own message.
#include "adapters/exec_protocol.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sampcert::adapters::exec_protocol {
namespace {

std::string ReadProtocolMd() {
  std::ifstream in(std::string(SOURCE_DIR) + "/adapters/python/PROTOCOL.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsHexByte(const std::string& w) {
  return w.size() == 2 && std::isxdigit(static_cast<unsigned char>(w[0])) &&
         std::isxdigit(static_cast<unsigned char>(w[1]));
}

// The bytes of PROTOCOL.md's ```hex NAME block: each line's leading two-digit hex words (the
// note that follows them starts with another word).
std::string Example(const std::string& name) {
  static const std::string md = ReadProtocolMd();
  const std::string fence = "```hex " + name + "\n";
  const std::size_t begin = md.find(fence);
  EXPECT_NE(begin, std::string::npos) << "PROTOCOL.md has no ```hex " << name << " block";
  if (begin == std::string::npos) return "";
  const std::size_t end = md.find("```", begin + fence.size());
  std::istringstream lines(md.substr(begin + fence.size(), end - begin - fence.size()));
  std::string bytes, line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    for (std::string w; words >> w && IsHexByte(w);) {
      bytes += static_cast<char>(std::stoi(w, nullptr, 16));
    }
  }
  return bytes;
}

// Compared as hex so that a failure shows where the bytes differ.
std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {kDigits[c >> 4], kDigits[c & 15], ' '};
  return out;
}

std::string Header(uint32_t magic, uint32_t kind, uint64_t length) {
  Writer w;
  w.Put(magic);
  w.Put(kind);
  w.Put(length);
  return w.out;
}

// Feeds `bytes` one at a time, as a slow socket would deliver them.
std::size_t FeedBytewise(ReplyParser* p, const std::string& bytes) {
  std::size_t taken = 0;
  for (char c : bytes) taken += p->Feed(std::string_view(&c, 1));
  return taken;
}

// A row of f32 logits at temperature 1 with no truncation, and a batch of `row` alone.
sampcert_row F32Row(const float* logits) {
  sampcert_row row{};
  row.struct_size = sizeof row;
  row.logits = logits;
  row.temperature = 1.0f;
  row.top_p = 1.0f;
  return row;
}
sampcert_batch OneRow(const sampcert_row* row, int32_t dtype, uint64_t vocab) {
  sampcert_batch batch{};
  batch.struct_size = sizeof batch;
  batch.dtype = dtype;
  batch.vocab = vocab;
  batch.num_rows = 1;
  batch.rows = row;
  return batch;
}

TEST(ExecProtocol, RequestsAreProtocolMdsBytes) {
  EXPECT_EQ(Hex(EncodeInfoRequest()), Hex(Example("info-request")));
  EXPECT_EQ(Hex(EncodeCreateRequest("x=1")), Hex(Example("create-request")));
  EXPECT_EQ(Hex(EncodeCreateRequest(std::nullopt)), Hex(Example("create-request-no-config")));
  EXPECT_EQ(Hex(EncodeDestroyRequest()), Hex(Example("destroy-request")));
  // An empty config string is not "no config": has_config 1, length 0.
  EXPECT_NE(EncodeCreateRequest(""), EncodeCreateRequest(std::nullopt));
}

TEST(ExecProtocol, SampleRequestIsProtocolMdsBytes) {
  const float logits[2] = {0.0f, 1.0f};
  sampcert_row row = F32Row(logits);
  row.row_id = 7;
  auto request =
      EncodeSampleRequest(OneRow(&row, SAMPCERT_DTYPE_F32, 2), 5, 0, 2, kExecProtocolMinor);
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(Hex(*request), Hex(Example("sample-request")));
}

// Protocol 1.7: SAMPLE_LOGPROBS, the mode and top_n after SAMPLE's fields; refused for 1.6.
TEST(ExecProtocol, SampleLogprobsRequestIsProtocolMdsBytes) {
  const float logits[2] = {0.0f, 1.0f};
  sampcert_row row = F32Row(logits);
  row.row_id = 7;
  sampcert_batch batch = OneRow(&row, SAMPCERT_DTYPE_F32, 2);
  batch.logprob_mode = SAMPCERT_LOGPROBS_PROCESSED;
  batch.top_logprobs = 2;
  auto request = EncodeSampleLogprobsRequest(batch, 5, 0, 2, kExecProtocolMinor);
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(Hex(*request), Hex(Example("sample-logprobs-request")));
  auto old = EncodeSampleLogprobsRequest(batch, 5, 0, 2, 6);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(old.error().message.find("1.7"), std::string::npos) << old.error().message;
}

// Protocol 1.5: a row's penalties, seed and token history (the ids after the masks), as a child
// of 1.5 reads them (80-byte row headers).
TEST(ExecProtocol, HistoryRequestIsProtocolMdsBytes) {
  const float logits[2] = {0.0f, 1.0f};
  const int64_t prompt[1] = {1}, output[2] = {0, 0};
  sampcert_row row = F32Row(logits);
  row.row_id = 3;
  row.repetition_penalty = 2.0f;
  row.presence_penalty = 0.5f;
  row.seed = 9;
  row.seed_mode = SAMPCERT_SEED_OWN;
  row.prompt_tokens = prompt;
  row.num_prompt_tokens = 1;
  row.output_tokens = output;
  row.num_output_tokens = 2;
  sampcert_batch batch = OneRow(&row, SAMPCERT_DTYPE_F32, 2);
  auto request = EncodeSampleRequest(batch, 5, 0, 1, 5);
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(Hex(*request), Hex(Example("sample-request-history")));
  // The header reads back as the row's fields and counts.
  const std::size_t at = kHeaderBytes + 24 + 24;
  uint32_t flags = 0;
  const RowParams p = ReadRowHeader(request->data() + at, kRowHeaderBytesMinor5, &flags);
  EXPECT_EQ(p.repetition_penalty, 2.0f);
  EXPECT_EQ(p.presence_penalty, 0.5f);
  EXPECT_EQ(p.seed, 9u);
  EXPECT_EQ(p.seed_mode, SAMPCERT_SEED_OWN);
  uint64_t counts[2];
  std::memcpy(counts, request->data() + at + kRowPromptCountOffset, 16);
  EXPECT_EQ(counts[0], 1u);
  EXPECT_EQ(counts[1], 2u);

  // A child of 1.4 reads 32-byte headers: such a row is refused, never sent without them.
  auto old = EncodeSampleRequest(batch, 5, 0, 1, 4);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(old.error().row, 0);
  EXPECT_EQ(old.error().message,
            "row 0: the child speaks protocol 1.4, which does not carry this row's penalties, "
            "seed or token history (1.5 does)");
  // Each alone is refused too: a history, a penalty, a seed mode.
  for (int which = 0; which < 3; ++which) {
    sampcert_row one = F32Row(logits);
    if (which == 0) {
      one.output_tokens = output;
      one.num_output_tokens = 2;
    } else if (which == 1) {
      one.frequency_penalty = -1.0f;
    } else {
      one.seed_mode = SAMPCERT_SEED_UNSEEDED;
    }
    batch.rows = &one;
    EXPECT_FALSE(EncodeSampleRequest(batch, 5, 0, 1, 4).ok()) << which;
    EXPECT_TRUE(EncodeSampleRequest(batch, 5, 0, 1, 5).ok()) << which;
  }
  // A repetition penalty of 0 is off, as 1 is: a 1.4 child gets the row, a 1.5 child reads 1.
  sampcert_row zero = F32Row(logits);
  batch.rows = &zero;
  EXPECT_TRUE(EncodeSampleRequest(batch, 5, 0, 1, 4).ok());
  auto zero5 = EncodeSampleRequest(batch, 5, 0, 1, 5);
  ASSERT_TRUE(zero5.ok());
  EXPECT_EQ(ReadRowHeader(zero5->data() + at, kRowHeaderBytesMinor5, &flags).repetition_penalty,
            1.0f);
  // A count without its list is a malformed call.
  zero.num_prompt_tokens = 3;
  auto dangling = EncodeSampleRequest(batch, 5, 0, 1, 5);
  ASSERT_FALSE(dangling.ok());
  EXPECT_EQ(dangling.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(dangling.error().message, "row 0: num_prompt_tokens is 3 but its list is null");
  // A MINOR 3 row (no history members) encodes with counts 0 at 1.5.
  sampcert_row minor3 = zero;
  minor3.struct_size = SAMPCERT_ROW_MINOR3_STRUCT_SIZE;
  batch.rows = &minor3;
  auto m3 = EncodeSampleRequest(batch, 5, 0, 1, 5);
  ASSERT_TRUE(m3.ok()) << m3.error().message;
  EXPECT_EQ(m3->size(), at + kRowHeaderBytesMinor5 + 8);
}

// Protocol 1.6: a row's logit bias and minimum length (the bias after the history).
TEST(ExecProtocol, BiasRequestIsProtocolMdsBytes) {
  const float logits[2] = {0.0f, 1.0f};
  const int64_t bias_tokens[1] = {1};
  const float bias_values[1] = {2.5f};
  sampcert_row row = F32Row(logits);
  row.bias_tokens = bias_tokens;
  row.bias_values = bias_values;
  row.num_bias = 1;
  row.min_tokens = 3;
  row.eos_token_id = 0;
  sampcert_batch batch = OneRow(&row, SAMPCERT_DTYPE_F32, 2);
  auto request = EncodeSampleRequest(batch, 5, 0, 1, kExecProtocolMinor);
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(Hex(*request), Hex(Example("sample-request-bias")));
  const std::size_t at = kHeaderBytes + 24 + 24;
  uint32_t flags = 0;
  const RowParams p = ReadRowHeader(request->data() + at, kRowHeaderBytes, &flags);
  EXPECT_EQ(p.min_tokens, 3);
  EXPECT_EQ(p.eos_token_id, 0);
  uint64_t num_bias = 0;
  std::memcpy(&num_bias, request->data() + at + kRowBiasCountOffset, 8);
  EXPECT_EQ(num_bias, 1u);

  // A child of 1.5 reads 80-byte headers: a bias or a minimum length alone is refused, never
  // sent without it; the same row without them is sent.
  auto old = EncodeSampleRequest(batch, 5, 0, 1, 5);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(old.error().message,
            "row 0: the child speaks protocol 1.5, which does not carry this row's logit bias or "
            "minimum length (1.6 does)");
  row.min_tokens = 0;
  EXPECT_FALSE(EncodeSampleRequest(batch, 5, 0, 1, 5).ok());  // the bias alone
  row.num_bias = 0;
  row.min_tokens = 2;
  EXPECT_FALSE(EncodeSampleRequest(batch, 5, 0, 1, 5).ok());  // the minimum length alone
  row.min_tokens = 0;
  row.eos_token_id = 7;  // any field past the header not at its default is refused, this one too
  EXPECT_FALSE(EncodeSampleRequest(batch, 5, 0, 1, 5).ok());
  row.eos_token_id = 0;
  EXPECT_TRUE(EncodeSampleRequest(batch, 5, 0, 1, 5).ok());
  // A count without its list is a malformed call; a MINOR 5 row has no bias members.
  row.num_bias = 2;
  row.bias_tokens = nullptr;
  auto dangling = EncodeSampleRequest(batch, 5, 0, 1, kExecProtocolMinor);
  ASSERT_FALSE(dangling.ok());
  EXPECT_EQ(dangling.error().message, "row 0: num_bias is 2 but its list is null");
  row.struct_size = SAMPCERT_ROW_MINOR5_STRUCT_SIZE;
  auto m5 = EncodeSampleRequest(batch, 5, 0, 1, kExecProtocolMinor);
  ASSERT_TRUE(m5.ok()) << m5.error().message;
  EXPECT_EQ(m5->size(), at + kRowHeaderBytes + 8);
}

TEST(ExecProtocol, ProbabilitiesRequestIsProtocolMdsBytes) {
  const uint16_t logits[2] = {0x3f80, 0xff80};  // bf16 1 and -inf
  const uint8_t mask[2] = {1, 0};
  sampcert_row row{};
  row.struct_size = sizeof row;
  row.logits = logits;
  row.mask = mask;
  row.temperature = 0.5f;
  row.top_p = 0.9f;
  row.top_k = 1;
  sampcert_batch batch{};
  batch.struct_size = sizeof batch;
  batch.dtype = SAMPCERT_DTYPE_BF16;
  batch.vocab = 2;
  batch.num_rows = 1;
  batch.rows = &row;
  auto request = EncodeProbabilitiesRequest(batch, 4);  // to a child of 1.4: 32-byte headers
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(Hex(*request), Hex(Example("probabilities-request")));
}

TEST(ExecProtocol, ABatchItCannotEncodeIsRefusedByName) {
  sampcert_batch batch{};
  batch.dtype = 7;
  batch.vocab = 2;
  auto unknown = EncodeProbabilitiesRequest(batch, kExecProtocolMinor);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(unknown.error().message, "unknown dtype 7 (0 = f32, 1 = f16, 2 = bf16)");
  batch.dtype = SAMPCERT_DTYPE_F16;
  batch.num_rows = 1;  // and no row array
  auto no_rows = EncodeSampleRequest(batch, 1, 0, 1, kExecProtocolMinor);
  ASSERT_FALSE(no_rows.ok());
  EXPECT_EQ(no_rows.error().message, "the batch has rows but no row array");
}

TEST(ExecProtocol, OkReplyParsedByteByByte) {
  const std::string reply = Example("sample-reply");
  ReplyParser p(OkLength::Exactly(16));
  EXPECT_EQ(p.Space().size(), kHeaderBytes);
  EXPECT_EQ(FeedBytewise(&p, reply.substr(0, 10)), 10u);
  EXPECT_EQ(p.stage(), ReplyParser::Stage::kHeader);  // a short header: 6 bytes still wanted
  EXPECT_EQ(p.stage_bytes(), 10u);
  EXPECT_EQ(p.Space().size(), 6u);
  EXPECT_EQ(FeedBytewise(&p, reply.substr(10, 10)), 10u);
  EXPECT_EQ(p.stage(), ReplyParser::Stage::kPayload);  // a short payload: 12 bytes wanted
  EXPECT_EQ(p.kind(), ReplyKind::kOk);
  EXPECT_EQ(p.stage_bytes(), 4u);
  EXPECT_EQ(p.Space().size(), 12u);
  // The rest, and the next message's bytes after it: only the reply's own are taken.
  EXPECT_EQ(p.Feed(reply.substr(20) + EncodeDestroyRequest()), reply.size() - 20);
  ASSERT_EQ(p.stage(), ReplyParser::Stage::kDone) << p.error();
  const std::string payload = p.TakePayload();
  int64_t tokens[2];
  ASSERT_EQ(payload.size(), sizeof tokens);
  std::memcpy(tokens, payload.data(), sizeof tokens);
  EXPECT_EQ(tokens[0], 1);
  EXPECT_EQ(tokens[1], 0);
}

TEST(ExecProtocol, ErrorReplyParsed) {
  const std::string reply = Example("error-reply");
  ReplyParser p(OkLength::Exactly(16));  // what the call would have accepted as OK
  EXPECT_EQ(p.Feed(reply + "trailing"), reply.size());
  ASSERT_EQ(p.stage(), ReplyParser::Stage::kDone) << p.error();
  EXPECT_EQ(p.kind(), ReplyKind::kError);
  EXPECT_EQ(p.error_reply().code, SAMPCERT_STATUS_INVALID_TOP_P);
  EXPECT_EQ(p.error_reply().row, 0);
  EXPECT_EQ(p.error_reply().message, "row 0: top_p is 1.5");
}

TEST(ExecProtocol, EmptyOkReplyIsDoneAfterItsHeader) {
  ReplyParser p(OkLength::Exactly(0));
  EXPECT_EQ(p.Feed(Header(kMagic, 0, 0)), kHeaderBytes);
  EXPECT_EQ(p.stage(), ReplyParser::Stage::kDone);
  EXPECT_TRUE(p.Space().empty());
  EXPECT_EQ(p.TakePayload(), "");
}

// A reply whose header the parser refuses: nothing of its payload is asked for.
std::string Refused(OkLength ok, const std::string& header) {
  ReplyParser p(ok);
  EXPECT_EQ(p.Feed(header + std::string(64, 'x')), kHeaderBytes);
  EXPECT_EQ(p.stage(), ReplyParser::Stage::kFailed);
  EXPECT_TRUE(p.Space().empty());
  return p.error();
}

TEST(ExecProtocol, MalformedHeadersAreRefusedByName) {
  EXPECT_EQ(Refused(OkLength::Exactly(8), "Hello, world!\nHello, world!\n"),
            "protocol error: a reply must start with 'SCP1', got 'Hello, world!\nHe' (did "
            "something write to fd 4?)");
  EXPECT_EQ(Refused(OkLength::Exactly(8), Header(0x32504353u, 0, 8)).substr(0, 46),
            "protocol error: a reply must start with 'SCP1'");  // SCP2
  EXPECT_EQ(Refused(OkLength::Exactly(16), Header(kMagic, 0, 8)),
            "protocol error: the reply is 8 bytes, expected 16");  // short for the call
  EXPECT_EQ(Refused(OkLength::Exactly(16), Header(kMagic, 0, uint64_t{1} << 62)),
            "protocol error: the reply is 4611686018427387904 bytes, expected 16");
  EXPECT_EQ(Refused(OkLength::AtMost(kMaxInfoReply), Header(kMagic, 0, kMaxInfoReply + 1)),
            "protocol error: the reply is 1048577 bytes, expected at most 1048576");
  EXPECT_EQ(Refused(OkLength::Exactly(0), Header(kMagic, 7, 0)),
            "protocol error: reply kind 7 of 0 bytes (0 = ok, 1 = error)");
  EXPECT_EQ(Refused(OkLength::Exactly(0), Header(kMagic, 1, kMaxErrorReply + 1)),
            "protocol error: reply kind 1 of 65537 bytes (0 = ok, 1 = error)");
}

// An ERROR reply with this payload, fully fed: its parse error ("" when it is valid).
std::string ErrorPayloadProblem(const std::string& payload) {
  ReplyParser p(OkLength::Exactly(0));
  p.Feed(Header(kMagic, 1, payload.size()) + payload);
  EXPECT_NE(p.stage(), ReplyParser::Stage::kPayload);
  return p.stage() == ReplyParser::Stage::kFailed ? p.error() : "";
}

std::string ErrorPayload(int32_t code, const std::string& message, uint32_t claimed_length) {
  Writer w;
  w.Put<int32_t>(code);
  w.Put<int32_t>(0);
  w.Put<int64_t>(-1);
  w.Put<uint32_t>(claimed_length);
  w.out += message;
  return w.out;
}

TEST(ExecProtocol, MalformedErrorRepliesAreRefused) {
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(11, "no bf16", 7)), "");
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(11, "no bf16", 7).substr(0, 8)),
            "protocol error: a malformed error reply (code 11)");  // short: no row, no message
  EXPECT_EQ(ErrorPayloadProblem(""), "protocol error: a malformed error reply (code 0)");
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(11, "no bf16", 8)),
            "protocol error: a malformed error reply (code 11)");  // the string overruns
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(11, "no bf16!", 7)),
            "protocol error: a malformed error reply (code 11)");  // a byte after the string
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(0, "ok?", 3)),
            "protocol error: a malformed error reply (code 0)");         // an error must not be OK
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(14, "bad draft", 9)), "");  // INVALID_DRAFT (1.2)
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(15, "bad id", 6)), "");     // INVALID_PENALTY (1.5)
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(16, "bad bias", 8)), "");   // INVALID_LOGIT_BIAS (1.6)
  EXPECT_EQ(ErrorPayloadProblem(ErrorPayload(17, "new", 3)),
            "protocol error: a malformed error reply (code 17)");  // beyond INVALID_LOGIT_BIAS
}

TEST(ExecProtocol, PrintableReplacesControlAndHighBytes) {
  EXPECT_EQ(Printable(std::string("a\tb\nc\x01\x7f\xff", 8)), "a\tb\nc???");
}

}  // namespace
}  // namespace sampcert::adapters::exec_protocol

namespace sampcert::adapters::exec_protocol {
namespace {

// VERIFY (protocol 1.2): trials that share their rows send each row and draft row once, and
// the chain records refer to them by index; the batch of target rows comes last.
TEST(ExecProtocol, VerifyRequestSendsSharedRowsOnce) {
  const float logits_a[3] = {0, 1, 2}, logits_b[3] = {2, 1, 0};
  const double q[6] = {0.5, 0.25, 0.25, 0.25, 0.25, 0.5};
  sampcert_row rows[3] = {};
  for (sampcert_row& r : rows) {
    r.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
    r.temperature = 1;
    r.top_p = 1;
    r.logits = logits_a;
  }
  rows[1].logits = logits_b;
  const int64_t drafted[2][2] = {{0, 2}, {1, 1}};
  sampcert_chain chains[2] = {};
  for (int c = 0; c < 2; ++c) {
    chains[c] = {SAMPCERT_CHAIN_STRUCT_SIZE, 2, rows, q, drafted[c], 7, static_cast<uint64_t>(c)};
  }
  const sampcert_chain_batch batch{SAMPCERT_CHAIN_BATCH_STRUCT_SIZE,
                                   SAMPCERT_DTYPE_F32,
                                   0,
                                   3,
                                   2,
                                   2,
                                   chains,
                                   0,
                                   0,
                                   nullptr,
                                   nullptr};
  auto request = EncodeVerifyRequest(batch, 99, kExecProtocolMinor);
  ASSERT_TRUE(request.ok()) << request.error().message;
  const std::string& m = *request;
  uint32_t kind = 0;
  std::memcpy(&kind, m.data() + 4, 4);
  EXPECT_EQ(kind, 6u);
  uint64_t head[6];
  std::memcpy(head, m.data() + kHeaderBytes, sizeof head);
  EXPECT_EQ(head[0], 99u);  // seed
  EXPECT_EQ(head[1], 3u);   // vocab
  EXPECT_EQ(head[2], 2u);   // two distinct draft rows (q and q + 3)
  EXPECT_EQ(head[3], 2u);   // chains
  EXPECT_EQ(head[4], 2u);   // max_drafts
  // Chain 1's record: k, row id, draw, target rows 0 1 0 (rows[2] equals rows[0]), drafts 0 1,
  // drafted tokens 1 1.
  const std::size_t record = 8 * (3 + 3 + 2 + 2);
  uint64_t chain1[10];
  std::memcpy(chain1, m.data() + kHeaderBytes + 40 + record, sizeof chain1);
  EXPECT_EQ(std::vector<uint64_t>(chain1, chain1 + 10),
            (std::vector<uint64_t>{2, 7, 1, 0, 1, 0, 0, 1, 1, 1}));
  // Then the two draft rows and a batch of two distinct target rows.
  const std::size_t batch_at = kHeaderBytes + 40 + 2 * record + 6 * 8;
  uint64_t num_rows = 0;
  std::memcpy(&num_rows, m.data() + batch_at + 16, 8);
  EXPECT_EQ(num_rows, 2u);
  EXPECT_EQ(m.size(), batch_at + 24 + 2 * (kRowHeaderBytes + 12));  // header, rows, logits
}

// VERIFY_DRAFT_LOGITS (protocol 1.3): the drafts are rows of logits, sent once each like the
// target rows; after the chain records, the target batch's length, the target batch, then the
// draft rows as a batch of the draft dtype.
TEST(ExecProtocol, DraftLogitsRequestSendsTheDraftRowsAsABatch) {
  const float logits[3] = {0, 1, 2};
  const uint16_t draft_bits[3] = {0x3c00, 0x0000, 0xbc00};  // f16 1, 0, -1
  sampcert_row targets[3] = {}, drafts[2] = {};
  for (sampcert_row& r : targets) {
    r.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
    r.temperature = 1;
    r.top_p = 1;
    r.logits = logits;
  }
  for (sampcert_row& r : drafts) {
    r.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
    r.temperature = 0.5f;
    r.top_p = 1;
    r.top_k = 2;
    r.logits = draft_bits;
  }
  drafts[1].temperature = 2;
  const int64_t drafted[2] = {0, 1};
  sampcert_chain chains[2] = {};
  for (int c = 0; c < 2; ++c) {
    chains[c] = {SAMPCERT_CHAIN_STRUCT_SIZE, 2, targets, nullptr, drafted, 7,
                 static_cast<uint64_t>(c)};
  }
  const sampcert_row* per_chain[2] = {drafts, drafts};
  const sampcert_chain_batch batch{SAMPCERT_CHAIN_BATCH_STRUCT_SIZE,
                                   SAMPCERT_DTYPE_F32,
                                   0,
                                   3,
                                   2,
                                   2,
                                   chains,
                                   SAMPCERT_DTYPE_F16,
                                   0,
                                   per_chain,
                                   nullptr};
  auto request = EncodeVerifyRequest(batch, 5, kExecProtocolMinor);
  ASSERT_TRUE(request.ok()) << request.error().message;
  const std::string& m = *request;
  uint32_t kind = 0;
  std::memcpy(&kind, m.data() + 4, 4);
  EXPECT_EQ(kind, 7u);
  uint64_t head[6];
  std::memcpy(head, m.data() + kHeaderBytes, sizeof head);
  EXPECT_EQ(head[2], 2u);  // two distinct draft rows (T = 0.5 and T = 2 on one buffer)
  const std::size_t record = 8 * (3 + 3 + 2 + 2);
  uint64_t chain1[10];
  std::memcpy(chain1, m.data() + kHeaderBytes + 40 + record, sizeof chain1);
  EXPECT_EQ(std::vector<uint64_t>(chain1, chain1 + 10),
            (std::vector<uint64_t>{2, 7, 1, 0, 0, 0, 0, 1, 0, 1}));
  const std::size_t length_at = kHeaderBytes + 40 + 2 * record;
  uint64_t target_bytes = 0;
  std::memcpy(&target_bytes, m.data() + length_at, 8);
  EXPECT_EQ(target_bytes, 24 + kRowHeaderBytes + 12u);  // one distinct target row
  const std::size_t drafts_at = length_at + 8 + target_bytes;
  int32_t draft_dtype = -1;
  uint64_t draft_rows = 0;
  std::memcpy(&draft_dtype, m.data() + drafts_at, 4);
  std::memcpy(&draft_rows, m.data() + drafts_at + 16, 8);
  EXPECT_EQ(draft_dtype, SAMPCERT_DTYPE_F16);
  EXPECT_EQ(draft_rows, 2u);
  EXPECT_EQ(m.size(), drafts_at + 24 + 2 * (kRowHeaderBytes + 6));
}

}  // namespace
}  // namespace sampcert::adapters::exec_protocol
