#include "modules/web/fetch.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <memory>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace genvm::web {

namespace {

using calldata::Bytes;
using calldata::Value;

// What one hop (one libcurl transfer) saw.
struct Hop {
  CURL* handle = nullptr;
  bool allowlisted = false;
  std::string refused_address;  // the last address the open-socket callback refused
  std::uint64_t limit = 0;
  bool over_limit = false;
  Bytes body;
  std::map<std::string, Bytes> headers;
  std::size_t header_bytes = 0;  // what `headers` holds, bounded by kMaxResponseHeaderBytes
};

// A response's headers kept for the answer; past this, further ones are dropped.
constexpr std::size_t kMaxResponseHeaderBytes = 256u << 10;

// The address check sits where libcurl opens the socket: it sees the very address about to be
// connected (after DNS, CURLOPT_RESOLVE pins, and on each happy-eyeballs attempt).
curl_socket_t open_socket(void* user, curlsocktype, curl_sockaddr* addr) {
  auto* hop = static_cast<Hop*>(user);
  if (!hop->allowlisted && address_forbidden(&addr->addr)) {
    hop->refused_address = address_text(&addr->addr);
    return CURL_SOCKET_BAD;
  }
  return ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

std::size_t on_body(char* p, std::size_t size, std::size_t n, void* user) {
  auto* hop = static_cast<Hop*>(user);
  std::size_t len = size * n;
  if (hop->body.size() + len > hop->limit) {
    hop->over_limit = true;
    return 0;  // stops the transfer: CURLE_WRITE_ERROR
  }
  if (hop->body.empty()) {
    // A Content-Length within the limit is allocated once (no doubling past it); a larger one
    // never gets here (CURLOPT_MAXFILESIZE_LARGE refuses it before the body).
    curl_off_t length = -1;
    if (curl_easy_getinfo(hop->handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length > 0 &&
        static_cast<std::uint64_t>(length) <= hop->limit) {
      hop->body.reserve(static_cast<std::size_t>(length));
    }
  }
  hop->body.insert(hop->body.end(), p, p + len);
  return len;
}

std::size_t on_header(char* p, std::size_t size, std::size_t n, void* user) {
  auto* hop = static_cast<Hop*>(user);
  std::string_view line(p, size * n);
  if (line.starts_with("HTTP/")) {
    hop->headers.clear();  // a new response (after 100 Continue, or the next one)
    hop->header_bytes = 0;
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return size * n;
  // A header name is an HTTP token (visible ASCII): anything else is dropped, so a server
  // cannot put a map key into the answer that is not UTF-8 (calldata would refuse it).
  std::string_view raw_name = line.substr(0, colon);
  if (!std::all_of(raw_name.begin(), raw_name.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; })) return size * n;
  std::string name(raw_name);
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ' || value.back() == '\t')) {
    value.remove_suffix(1);
  }
  if (hop->header_bytes + name.size() + value.size() > kMaxResponseHeaderBytes) return size * n;
  hop->header_bytes += name.size() + value.size();
  hop->headers[name] = Bytes(value.begin(), value.end());
  return size * n;
}

struct CurlFree {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

module::Answer sending_failed(const std::string& url, std::string why) {
  return module::Answer::user_error({"SENDING_REQUEST"}, {{"error", Value(std::move(why))}, {"url", Value(url)}});
}

bool header_text_ok(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

bool sensitive_header(std::string name) {
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return name == "authorization" || name == "cookie" || name == "proxy-authorization";
}

// The transfers in flight in this process: each may hold up to kMaxAnswerBody of body, so
// their number (config max_concurrent_requests) bounds the module's body memory.
class TransferGate {
 public:
  // False when `deadline` passed before a slot was free.
  bool enter(std::uint32_t limit, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> l(m_);
    if (!cv_.wait_until(l, deadline, [&] { return active_ < std::max<std::uint32_t>(limit, 1); })) return false;
    ++active_;
    return true;
  }
  void leave() {
    {
      std::lock_guard<std::mutex> l(m_);
      --active_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::uint32_t active_ = 0;
};

TransferGate& transfer_gate() {
  static TransferGate g;
  return g;
}

}  // namespace

Status init_http() {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return make_error("http_init", "curl_global_init failed");
  return {};
}

module::Answer fetch(const UrlPolicy& policy, const module::RequestPayload& request, std::uint32_t size_limit) {
  if (request.sign) {
    return module::Answer::user_error({"SENDING_REQUEST"},
                                      {{"error", Value("request signing is not available in this module")},
                                       {"url", Value(request.url)}});
  }
  const WebConfig& config = policy.config();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config.request_timeout_ms);
  // What one answer frame can carry: a larger size_limit would buffer a body no frame can hold.
  const std::uint32_t body_cap = std::min(size_limit, kMaxAnswerBody);
  if (!transfer_gate().enter(config.max_concurrent_requests, deadline)) {
    return sending_failed(request.url, "timed out waiting for a free connection");
  }
  struct Leave {
    ~Leave() { transfer_gate().leave(); }
  } leave;
  std::string url = request.url;
  std::string method = request.method;
  std::optional<Bytes> body = request.body;
  std::map<std::string, Bytes> headers = request.headers;
  std::string previous_scheme, previous_host;
  std::unique_ptr<curl_slist, CurlFree> resolve;
  for (const auto& r : config.resolve) {
    curl_slist* l = curl_slist_append(resolve.get(), r.c_str());
    if (!l) return module::Answer::fatal("out of memory");
    resolve.release();
    resolve.reset(l);
  }
  for (int redirects = 0;; ++redirects) {
    auto verdict = policy.check(url);
    if (!verdict) return verdict.error().answer;
    if (previous_scheme == "https" && verdict->scheme == "http") {
      return sending_failed(url, "refusing to follow a redirect from https to http");
    }
    // Credentials do not follow a redirect to another origin.
    if (!previous_host.empty() && (previous_host != verdict->host || previous_scheme != verdict->scheme)) {
      std::erase_if(headers, [](const auto& kv) { return sensitive_header(kv.first); });
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return sending_failed(url, "timed out");
    long left_ms = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());

    Hop hop;
    hop.allowlisted = verdict->allowlisted;
    hop.limit = body_cap;
    std::unique_ptr<CURL, CurlFree> h(curl_easy_init());
    if (!h) return module::Answer::fatal("curl_easy_init failed");
    std::unique_ptr<curl_slist, CurlFree> header_list;
    auto add_header = [&](const std::string& line) {
      curl_slist* l = curl_slist_append(header_list.get(), line.c_str());
      if (!l) return false;
      header_list.release();
      header_list.reset(l);
      return true;
    };
    bool has_content_type = false;
    for (const auto& [name, value] : headers) {
      std::string v(value.begin(), value.end());
      if (name.empty() || name.find(':') != std::string::npos || !header_text_ok(name) || !header_text_ok(v)) {
        return sending_failed(url, "header `" + name + "` cannot be sent");
      }
      std::string lname = name;
      for (char& c : lname) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      has_content_type = has_content_type || lname == "content-type";
      if (!add_header(v.empty() ? name + ";" : name + ": " + v)) return module::Answer::fatal("out of memory");
    }
    // libcurl's own defaults a contract did not ask for: no form content type, no Expect.
    if (body && !has_content_type && !add_header("Content-Type:")) return module::Answer::fatal("out of memory");
    if (!add_header("Expect:")) return module::Answer::fatal("out of memory");

    char errbuf[CURL_ERROR_SIZE] = "";
    CURL* c = h.get();
    hop.handle = c;
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");  // never a proxy from the environment
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "genvm-module-web");
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &hop);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &hop);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hop);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(left_ms, static_cast<long>(config.connect_timeout_ms)));
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(body_cap));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, header_list.get());
    if (resolve) curl_easy_setopt(c, CURLOPT_RESOLVE, resolve.get());
    if (!config.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config.ca_file.c_str());
    if (method == "HEAD") {
      curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else {
      // A body makes libcurl POST unless the method is named, so it is named whenever there
      // is one (a GET with a body stays a GET).
      if (method != "GET" || body) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
      if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->empty() ? "" : reinterpret_cast<const char*>(body->data()));
      }
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (hop.over_limit || rc == CURLE_FILESIZE_EXCEEDED) {
      return module::Answer::user_error(
          {"READING_BODY"}, {{"error", Value("response body size exceeds limit of " + std::to_string(body_cap) + " bytes")},
                             {"status", Value(static_cast<std::int64_t>(status))},
                             {"url", Value(url)}});
    }
    if (rc != CURLE_OK) {
      if (!hop.refused_address.empty() && status == 0) {
        return module::Answer::user_error({"ADDRESS_FORBIDDEN"},
                                          {{"address", Value(hop.refused_address)}, {"url", Value(url)}});
      }
      return sending_failed(url, std::string(curl_easy_strerror(rc)) + (*errbuf ? std::string(": ") + errbuf : ""));
    }
    char* location = nullptr;
    curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location);
    bool redirect = status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    if (!redirect || !location) {
      return module::Answer::ok(Value::map({{"response", module::response_value(static_cast<std::uint16_t>(status),
                                                                                   hop.headers, hop.body)}}));
    }
    if (redirects == kMaxRedirects) return sending_failed(url, "too many redirects");
    // 301/302/303 turn the request into a GET without a body (HEAD stays HEAD); 307/308 keep it.
    if (status <= 303 && method != "HEAD") {
      method = "GET";
      body.reset();
      std::erase_if(headers, [](const auto& kv) {
        std::string n = kv.first;
        for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return n == "content-type" || n == "content-length";
      });
    }
    previous_scheme = verdict->scheme;
    previous_host = verdict->host;
    url = location;
  }
}

}  // namespace genvm::web
