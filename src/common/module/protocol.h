// The executor ⇄ module wire (LLM and web modules), shared by the executor and the module
// binaries. Shapes are those of GenVM's modules-interfaces crate (lib.rs), encoded as its
// calldata derive encodes them: structs are maps sorted by key, externally tagged enums are
// `{"Variant": payload}` (a tuple variant's payload an array), unit variants their name.
//
//   executor                                   module
//   frame(hello)                       ───▶    parse_hello
//   frame(prompt_message(...))         ───▶    parse_llm_message / parse_web_message
//   parse_answer                       ◀───    frame(answer_value(Answer::ok(...)))
//
// A frame is `u32 big-endian length ‖ calldata`. The first frame on a connection is the hello;
// every later frame from the executor is one request, answered by exactly one frame.
//
// The request payloads are also what a contract writes in its gl_call (02-gl_call.rst):
// parse_prompt_payload & co. read both, strictly (closed maps, exact kinds), so the executor
// checks a contract's request with the same code the module uses to read it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"

namespace genvm::module {

using calldata::Bytes;
using calldata::Value;

// Largest frame either side accepts (ours; the public side has none).
inline constexpr std::uint32_t kMaxFrame = 64u << 20;

// ---- frames

// `u32 BE length ‖ bytes`.
Bytes frame(std::span<const std::uint8_t> body);
std::uint32_t frame_length(const std::uint8_t header[4]);

// Blocking frame I/O on a connected stream descriptor (the module side; the executor goes
// through its HostConnection). read_frame: nullopt at a clean end of stream before a header;
// "module_oversized" above kMaxFrame, "module_io" otherwise.
Result<std::optional<Bytes>> read_frame(int fd);
// The same with this reader's own bound `limit` (at most kMaxFrame): a longer frame is read
// through a small buffer and dropped, so the stream stays in step without the frame ever being
// held; the answer is then an empty body and `*dropped` its length (0 for a frame kept).
Result<std::optional<Bytes>> read_frame(int fd, std::uint32_t limit, std::uint32_t* dropped);
Status write_frame(int fd, std::span<const std::uint8_t> body);

// ---- hello (GenVMHello)

enum class Role { kLeader, kValidator };
std::string_view role_name(Role r);  // "Leader" / "Validator" (the calldata derive's names)

struct Hello {
  std::uint64_t genvm_id = 0;
  Role role = Role::kLeader;
  // HostData: a map holding string `node_address` and `tx_id`, and whatever else the host put
  // in its JSON (as calldata: integers, strings, bools, null, arrays, maps).
  Value::Map host_data;
  std::map<std::string, std::string> gas_data;
  std::uint32_t initial_time_units_allocation = 0;
  friend bool operator==(const Hello&, const Hello&) = default;
};
Value hello_value(const Hello& h);
Result<Hello> parse_hello(const Value& v);

// ExecutionData.host_data is JSON text; the hello carries it as a map (lib.rs HostData).
// Error "bad_host_data": not a JSON object, no string node_address / tx_id, or a number that is
// not an integer (calldata has no fractions; the public encoder panics on one).
Result<Value::Map> host_data_from_json(std::string_view json);

// ---- LLM requests

enum class OutputFormat { kText, kJson };

struct PromptPayload {
  OutputFormat response_format = OutputFormat::kText;  // absent: text
  std::string prompt;
  std::vector<Bytes> images;
};

// The three templates, each with its own closed field set (lib.rs PromptTemplatePayload).
enum class Template { kEqComparative, kEqNonComparativeValidator, kEqNonComparativeLeader };
std::string_view template_name(Template t);

struct PromptTemplatePayload {
  Template kind = Template::kEqComparative;
  std::map<std::string, std::string> fields;  // exactly the template's fields
  // EqComparative and EqNonComparativeValidator answer a bool, EqNonComparativeLeader text.
  bool expects_bool() const { return kind != Template::kEqNonComparativeLeader; }
};

using LlmPayload = std::variant<PromptPayload, PromptTemplatePayload>;
struct LlmMessage {
  LlmPayload payload;
  BigInt remaining_fuel_as_gen;  // u256
};

// ---- web requests

enum class RenderMode { kText, kHtml, kScreenshot };

struct RenderPayload {
  RenderMode mode = RenderMode::kText;
  std::string url;
  std::string wait_after_loaded;  // "<n>s" or "<n>ms", as written
  std::uint64_t wait_after_loaded_ms = 0;
};

// The methods lib.rs RequestMethod lists (the spec's list and PUT).
inline constexpr std::string_view kRequestMethods[] = {"GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH"};

struct RequestPayload {
  std::string method;
  std::string url;
  std::map<std::string, Bytes> headers;
  std::optional<Bytes> body;  // absent or null: none
  bool sign = false;          // absent: false
};

using WebPayload = std::variant<RenderPayload, RequestPayload>;
struct WebMessage {
  WebPayload payload;
  std::uint32_t size_limit = 0;
};

// The payload readers (contract gl_call bodies and module request payloads alike); error code
// "bad_payload" naming the field.
Result<PromptPayload> parse_prompt_payload(const Value& v);
Result<PromptTemplatePayload> parse_template_payload(const Value& v);
Result<RenderPayload> parse_render_payload(const Value& v);
Result<RequestPayload> parse_request_payload(const Value& v);

Value payload_value(const PromptPayload& p);
Value payload_value(const PromptTemplatePayload& p);
Value payload_value(const RenderPayload& p);
Value payload_value(const RequestPayload& p);

// {"Prompt": {payload, remaining_fuel_as_gen}} / {"PromptTemplate": {...}}
Value llm_message_value(const LlmMessage& m);
// {"Render": [payload, size_limit]} / {"Request": [payload, size_limit]}
Value web_message_value(const WebMessage& m);
Result<LlmMessage> parse_llm_message(const Value& v);
Result<WebMessage> parse_web_message(const Value& v);

// ---- answers (modules-interfaces Result<T>)

enum class AnswerKind { kOk, kUserError, kFatalError };

struct Answer {
  AnswerKind kind = AnswerKind::kFatalError;
  Value value;  // kOk: the T; kUserError: the GenericValue; kFatalError: the message string

  static Answer ok(Value v) { return {AnswerKind::kOk, std::move(v)}; }
  // The public modules' user error: {"causes": [..], "ctx": {..}}.
  static Answer user_error(std::vector<std::string> causes, Value::Map ctx = {});
  static Answer fatal(std::string message) { return {AnswerKind::kFatalError, Value(std::move(message))}; }
};
Value answer_value(const Answer& a);
// "module_protocol" unless a single-key map naming a variant (FatalError's value a string).
Result<Answer> parse_answer(const Value& v);

// The Ok payloads the executor expects.
// LLM: PromptAnswer {consumed_gen: u256, data: text | map | bool}.
struct PromptAnswer {
  Value data;
  BigInt consumed_gen;
};
Value prompt_answer_value(const PromptAnswer& a);
Result<PromptAnswer> parse_prompt_answer(const Value& v);
// Web: RenderAnswer, one of {"response": Response} / {"text": str} / {"image": bytes}, where
// Response is {body: bytes, headers: {str: bytes}, status: u16}.
Result<Value> check_render_answer(const Value& v);
Value response_value(std::uint16_t status, const std::map<std::string, Bytes>& headers, const Bytes& body);

}  // namespace genvm::module
