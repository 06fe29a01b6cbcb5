#include "modules/llm/http_post.h"

#include <chrono>
#include <memory>

#include <curl/curl.h>

namespace genvm::llm {

namespace {

struct Sink {
  std::string body;
  bool over = false;
};

std::size_t on_body(char* p, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::size_t len = size * n;
  if (sink->body.size() + len > kMaxReplyBytes) {
    sink->over = true;
    return 0;
  }
  sink->body.append(p, len);
  return len;
}

Error failure(HttpFailure f, const char* code, std::string message) { return make_error(f, code, std::move(message)); }

// When bytes last moved (sent or received) and whether the request sat idle past its bound.
struct Idle {
  std::chrono::steady_clock::time_point since;
  curl_off_t moved;
  std::uint64_t bound_ms;
  bool stalled;
};

int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
  auto* idle = static_cast<Idle*>(user);
  const auto now = std::chrono::steady_clock::now();
  if (dlnow + ulnow != idle->moved) {
    idle->moved = dlnow + ulnow;
    idle->since = now;
    return 0;
  }
  if (now - idle->since >= std::chrono::milliseconds(idle->bound_ms)) {
    idle->stalled = true;
    return 1;  // CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

}  // namespace

Status init_http_client() {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return make_error("http_init", "curl_global_init failed");
  return {};
}

Result<HttpReply> http_post(const HttpCall& call, const HttpOptions& options) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return failure(HttpFailure::kOther, "http_other", "curl_easy_init failed");
  curl_slist* headers = nullptr;
  for (const auto& h : call.headers) headers = curl_slist_append(headers, h.c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers, curl_slist_free_all);
  Sink sink;
  char error_text[CURL_ERROR_SIZE] = "";
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, call.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, call.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // never a proxy from the environment
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout_ms));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms));
  // No byte moving either way for first_byte_timeout: a backend that took the request and never
  // answers. Watched in libcurl's progress callback (called about once a second when idle), not
  // its low-speed check, which averages over several seconds and so waits ~5 s longer.
  Idle idle{std::chrono::steady_clock::now(), -1, options.first_byte_timeout_ms, false};
  if (options.first_byte_timeout_ms > 0 && options.first_byte_timeout_ms < options.timeout_ms) {
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &idle);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  CURLcode rc = curl_easy_perform(c);
  std::string message = error_text[0] != '\0' ? error_text : curl_easy_strerror(rc);
  if (sink.over) return failure(HttpFailure::kTooLarge, "http_too_large", "the reply passed 32 MiB");
  if (idle.stalled) {
    return failure(HttpFailure::kTimeout, "http_timeout",
                   "no byte sent or received for " + std::to_string(options.first_byte_timeout_ms) + " ms (first_byte_timeout)");
  }
  switch (rc) {
    case CURLE_OK:
      break;
    case CURLE_OPERATION_TIMEDOUT:
      return failure(HttpFailure::kTimeout, "http_timeout", message);
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
      return failure(HttpFailure::kConnect, "http_connect", message);
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return failure(HttpFailure::kClosed, "http_closed", message);
    default:
      return failure(HttpFailure::kOther, "http_other", message);
  }
  HttpReply r;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  r.body = std::move(sink.body);
  return r;
}

}  // namespace genvm::llm
