// One HTTP POST to a provider through libcurl: TLS always verified (against ca_file when set),
// a connect timeout, a first-byte (idle) timeout and a whole-request timeout, no proxy from the
// environment, no redirects, the response body bounded.
//
//   auto r = http_post(call, {timeout_ms, connect_timeout_ms, ca_file, first_byte_timeout_ms});
//   if (!r) r.error().errc is an HttpFailure
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "modules/llm/providers.h"

namespace genvm::llm {

// GenVM's bound on a provider body it buffers (prompt.rs response_body_limit's cap).
inline constexpr std::size_t kMaxReplyBytes = 32u << 20;

enum class HttpFailure { kConnect = 1, kTimeout, kClosed, kTooLarge, kOther };

struct HttpOptions {
  std::uint64_t timeout_ms = 180'000;
  std::uint64_t connect_timeout_ms = 10'000;
  std::string ca_file;
  // No byte sent or received for this long ends the request as kTimeout: the wait for the
  // answer's first byte, or a stall after it (checked about once a second). 0: no bound (the
  // module passes its configured first_byte_timeout).
  std::uint64_t first_byte_timeout_ms = 0;
};

struct HttpReply {
  long status = 0;
  std::string body;
};

// Errors: errc an HttpFailure, code "http_connect" / "http_timeout" / "http_closed" /
// "http_too_large" / "http_other", message libcurl's.
Result<HttpReply> http_post(const HttpCall& call, const HttpOptions& options);

// Once per process, before any thread posts (curl_global_init).
Status init_http_client();

}  // namespace genvm::llm
