#include "modules/web/url_policy.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include <curl/curl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

namespace genvm::web {

namespace {

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

Refusal refuse(const char* cause, calldata::Value::Map ctx) {
  return Refusal{module::Answer::user_error({cause}, std::move(ctx))};
}

bool ipv4_forbidden(const std::uint8_t o[4]) {
  std::uint8_t a = o[0], b = o[1];
  return a == 0 || a == 10 || a == 127 || (a == 169 && b == 254) || (a == 172 && b >= 16 && b <= 31) ||
         (a == 192 && b == 168) || (a == 100 && b >= 64 && b <= 127) || a >= 224 ||
         // documentation: 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24
         (a == 192 && b == 0 && o[2] == 2) || (a == 198 && b == 51 && o[2] == 100) || (a == 203 && b == 0 && o[2] == 113);
}

// A curl URL part, or empty when absent.
std::string url_part(CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* out = nullptr;
  if (curl_url_get(u, part, &out, flags) != CURLUE_OK || !out) return {};
  std::string s(out);
  curl_free(out);
  return s;
}

}  // namespace

bool address_forbidden(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    std::uint8_t o[4];
    std::memcpy(o, &in->sin_addr, 4);
    return ipv4_forbidden(o);
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    const std::uint8_t* b = in6->sin6_addr.s6_addr;
    static const std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(b, kMapped, 12) == 0) return ipv4_forbidden(b + 12);
    bool zero_prefix = std::all_of(b, b + 15, [](std::uint8_t x) { return x == 0; });
    if (zero_prefix && (b[15] == 0 || b[15] == 1)) return true;  // :: and ::1
    if ((b[0] & 0xfe) == 0xfc) return true;                       // fc00::/7
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;       // fe80::/10
    if (b[0] == 0xff) return true;                                 // multicast
    return false;
  }
  return true;
}

std::string address_text(const sockaddr* a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a->sa_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, buf, sizeof(buf));
  if (a->sa_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, buf, sizeof(buf));
  return buf;
}

Result<std::vector<sockaddr_storage>> resolve_addresses(const WebConfig& config, const std::string& host,
                                                        std::uint16_t port) {
  std::string bare = host.size() > 1 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
  std::string prefix = host + ":" + std::to_string(port) + ":";
  std::vector<std::string> pinned;
  for (const auto& pin : config.resolve) {
    std::string p = pin.starts_with('+') ? pin.substr(1) : pin;
    if (!lower(p).starts_with(prefix)) continue;
    std::string rest = p.substr(prefix.size());
    for (std::size_t at = 0; at <= rest.size();) {
      auto comma = rest.find(',', at);
      std::string a = rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (a.size() > 1 && a.front() == '[') a = a.substr(1, a.size() - 2);
      if (!a.empty()) pinned.push_back(a);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (!pinned.empty()) break;
  }
  std::vector<sockaddr_storage> out;
  auto add = [&](const std::string& name, int flags) -> Status {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = flags;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
    if (rc != 0) return make_error("resolve", "cannot resolve " + host + ": " + ::gai_strerror(rc));
    for (addrinfo* ai = res; ai && out.size() < 64; ai = ai->ai_next) {
      if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
      sockaddr_storage ss{};
      std::memcpy(&ss, ai->ai_addr, std::min<std::size_t>(ai->ai_addrlen, sizeof(ss)));
      if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
      if (ss.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
      out.push_back(ss);
    }
    ::freeaddrinfo(res);
    return {};
  };
  if (pinned.empty()) {
    if (auto s = add(bare, 0); !s) return s.take_error();
  } else {
    // A pin names addresses, never a name to look up again.
    for (const auto& a : pinned) {
      if (auto s = add(a, AI_NUMERICHOST); !s) return s.take_error();
    }
  }
  if (out.empty()) return make_error("resolve", "no address for " + host);
  return out;
}

Result<std::unique_ptr<UrlPolicy>> UrlPolicy::create(const WebConfig& config) {
  std::unique_ptr<UrlPolicy> p(new UrlPolicy(config));
  std::ifstream f(config.tld_list_path);
  if (!f) return make_error("bad_config", "cannot read the TLD list " + config.tld_list_path);
  bool icann = false;
  std::string line;
  while (std::getline(f, line)) {
    if (line.find("===BEGIN ICANN DOMAINS===") != std::string::npos) icann = true;
    if (line.find("===END ICANN DOMAINS===") != std::string::npos) break;
    if (!icann || line.empty() || line.starts_with("//")) continue;
    auto end = line.find_first_of(" \t\r");
    std::string rule = line.substr(0, end);
    if (rule.empty()) continue;
    auto dot = rule.rfind('.');
    p->tlds_.insert(lower(dot == std::string::npos ? rule : rule.substr(dot + 1)));
  }
  if (p->tlds_.empty()) return make_error("bad_config", config.tld_list_path + " has no ICANN section");
  for (const auto& t : config.extra_tld) p->tlds_.insert(lower(t));
  return p;
}

bool UrlPolicy::allowlisted_host(std::string_view host) const {
  for (const auto& h : config_.always_allow_hosts) {
    if (lower(h) == host) return true;
  }
  return false;
}

Result<UrlVerdict, Refusal> UrlPolicy::check(const std::string& url) const {
  CURLU* u = curl_url();
  if (!u) return refuse("MALFORMED_URL", {{"url", url}});
  bool parsed = curl_url_set(u, CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK;
  UrlVerdict v;
  std::string port;
  if (parsed) {
    v.scheme = lower(url_part(u, CURLUPART_SCHEME));
    v.host = lower(url_part(u, CURLUPART_HOST));
    port = url_part(u, CURLUPART_PORT);  // only a port the URL writes
    std::string effective = url_part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
    // libcurl refuses a port above 65535, so the digits fit.
    if (!effective.empty() && effective.size() <= 5 &&
        std::all_of(effective.begin(), effective.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      v.port = static_cast<std::uint16_t>(std::stoul(effective));
    }
  }
  curl_url_cleanup(u);
  if (!parsed || v.host.empty()) return refuse("MALFORMED_URL", {{"url", url}});
  if (v.scheme != "http" && v.scheme != "https") return refuse("SCHEMA_FORBIDDEN", {{"schema", v.scheme}, {"url", url}});
  if (allowlisted_host(v.host)) {
    v.allowlisted = true;
    return v;
  }
  if (!port.empty() && port != "80" && port != "443") {
    return refuse("PORT_FORBIDDEN", {{"port", calldata::Value(BigInt::parse_decimal(port).value())}, {"url", url}});
  }
  auto dot = v.host.rfind('.');
  std::string tld = dot == std::string::npos ? v.host : v.host.substr(dot + 1);
  if (!tld_allowed(tld)) return refuse("TLD_FORBIDDEN", {{"tld", tld}, {"url", url}});
  return v;
}

}  // namespace genvm::web
