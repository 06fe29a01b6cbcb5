// Which URLs and addresses a contract's web call may reach (the public web module's
// lib-web.lua check_url and its filtering resolver, written again here).
//
//   auto policy = UrlPolicy::create(config);          // loads the TLD list
//   auto v = policy->check("https://example.com/x");  // or the user error to answer
//   policy->address_allowed(sockaddr, v->allowlisted) // for every address actually connected
//
// check(): http/https only (SCHEMA_FORBIDDEN); hosts in always_allow_hosts pass everything
// else; other hosts need port 80/443 or none (PORT_FORBIDDEN) and a top-level domain on the
// list (TLD_FORBIDDEN); a URL libcurl cannot parse is MALFORMED_URL. The TLD list is the ICANN
// section of the public suffix list (Debian's `publicsuffix`), each rule's last label, plus
// extra_tld.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <sys/socket.h>

#include "common/module/protocol.h"
#include "common/result.h"
#include "modules/web/config.h"

namespace genvm::web {

struct UrlVerdict {
  std::string scheme;  // lower case
  std::string host;    // lower case; IPv6 literals in brackets
  std::uint16_t port = 0;  // the URL's port, or its scheme's default
  bool allowlisted = false;
};

// A refused URL: the user error the module answers.
struct Refusal {
  module::Answer answer;
};

// Not globally routable (the public module's ipv4_is_bad / ipv6_is_bad): unspecified, "this"
// network, private, CGNAT, loopback, link-local, documentation, multicast, broadcast and
// reserved IPv4; unspecified, loopback, unique-local, link-local and multicast IPv6, and an
// IPv4-mapped IPv6 address by its IPv4 part. Unknown families are refused too.
bool address_forbidden(const sockaddr* addr);
// The numeric text of an IPv4 / IPv6 address ("?" for another family).
std::string address_text(const sockaddr* addr);

// The addresses `host:port` reaches, as the module resolves them for every connection it
// makes or checks: a `resolve` pin (curl's "HOST:PORT:ADDR[,ADDR]", a leading '+' ignored)
// whose host and port match, else the system resolver. `host` is lower case, IPv6 literals in
// brackets. Error "resolve" naming the host.
Result<std::vector<sockaddr_storage>> resolve_addresses(const WebConfig& config, const std::string& host,
                                                        std::uint16_t port);

class UrlPolicy {
 public:
  static Result<std::unique_ptr<UrlPolicy>> create(const WebConfig& config);
  // The TLDs read from the list (for tests and the start-up log line).
  std::size_t tld_count() const { return tlds_.size(); }
  bool tld_allowed(std::string_view tld) const { return tlds_.count(std::string(tld)) != 0; }
  Result<UrlVerdict, Refusal> check(const std::string& url) const;
  bool allowlisted_host(std::string_view host) const;
  const WebConfig& config() const { return config_; }

 private:
  explicit UrlPolicy(WebConfig c) : config_(std::move(c)) {}
  WebConfig config_;
  std::set<std::string, std::less<>> tlds_;
};

}  // namespace genvm::web
