// WebRequest's HTTP client: one request through libcurl, redirects followed by hand so that
// every hop passes the UrlPolicy again.
//
//   module::Answer a = fetch(policy, payload, size_limit);
//
// Ok: {"response": {status, headers, body}} (the public module's RenderAnswer::Response), the
// headers of the final response with lower-case names (the last of repeated ones). Every
// failure is a user error the contract sees, as the public Request entry point makes them:
// the URL checks' causes; ADDRESS_FORBIDDEN when an address about to be connected (the one
// libcurl resolved, checked in its open-socket callback, so DNS cannot swap it afterwards) is
// not globally routable and the host is not allow-listed; SENDING_REQUEST for connection
// failures, timeouts, a redirect from https to http, more than 10 redirects, a header libcurl
// cannot send, or `sign` (no signer yet); READING_BODY (the public module's cause) when the body
// passes size_limit or kMaxAnswerBody, whichever is smaller: the transfer stops there (a
// Content-Length above it stops it before the body), so a body is never buffered past what one
// answer frame can carry. At most max_concurrent_requests transfers run at once in the process;
// others wait for a slot (within request_timeout).
#pragma once

#include <cstdint>

#include "common/module/protocol.h"
#include "modules/web/url_policy.h"

namespace genvm::web {

inline constexpr int kMaxRedirects = 10;
// The largest body an answer can carry: the frame's bound less room for its envelope (status,
// headers up to 256 KiB, the calldata around them).
inline constexpr std::uint32_t kMaxAnswerBody = module::kMaxFrame - (1u << 20);

module::Answer fetch(const UrlPolicy& policy, const module::RequestPayload& request, std::uint32_t size_limit);

// Once per process, before any thread fetches (curl_global_init).
Status init_http();

}  // namespace genvm::web
