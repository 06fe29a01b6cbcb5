#include "common/vm_error.h"

#include <string>

namespace genvm {

std::string_view to_string(ResultCode code) {
  switch (code) {
    case ResultCode::kReturn: return "Return";
    case ResultCode::kUserError: return "UserError";
    case ResultCode::kVmError: return "VMError";
    case ResultCode::kInternalError: return "InternalError";
    case ResultCode::kFatalVmError: return "FatalVMError";
  }
  return "VMError";
}

std::string_view wire_name(ResultCode code) {
  switch (code) {
    case ResultCode::kReturn: return "Return";
    case ResultCode::kUserError: return "UserError";
    case ResultCode::kVmError: return "VmError";
    case ResultCode::kInternalError: return "InternalError";
    case ResultCode::kFatalVmError: return "FatalVmError";
  }
  return "VmError";
}

Result<ResultCode> parse_result_code_name(std::string_view name) {
  for (int c = 0; c <= static_cast<int>(ResultCode::kFatalVmError); ++c) {
    if (wire_name(static_cast<ResultCode>(c)) == name) return static_cast<ResultCode>(c);
  }
  return make_error("unknown_result_code", "unknown result code name '" + std::string(name) + "'");
}

Result<ResultCode> parse_result_code(std::uint8_t byte) {
  if (byte > static_cast<std::uint8_t>(ResultCode::kFatalVmError)) {
    return make_error("unknown_result_code", "unknown result code " + std::to_string(byte));
  }
  return static_cast<ResultCode>(byte);
}

Result<VmError> VmError::with_param(std::string_view param) const {
  bool takes = false;
  for (const VmErrorNode& n : kVmErrorNodes) {
    if (n.is_code && n.takes_param && (n.wire.empty() ? n.path : n.wire) == public_code_) takes = true;
  }
  if (!takes) {
    return make_error("vm_error_param", "VM error '" + public_code_ + "' takes no parameter");
  }
  if (param.empty() || param.find(' ') != std::string_view::npos ||
      param.find('#') != std::string_view::npos) {
    return make_error("vm_error_param",
                      "a VM error parameter must be one non-empty component without ' ' or '#'");
  }
  return VmError(public_code_ + " " + std::string(param), detail_);
}

VmError VmError::with_detail(std::string detail) const { return VmError(public_code_, std::move(detail)); }

std::string VmError::to_string() const {
  if (detail_.empty()) return public_code_;
  return public_code_ + " # " + detail_;
}

bool VmError::matches(VmErrorCode code) const {
  std::string_view p = code.wire_code();
  if (public_code_.size() < p.size() || std::string_view(public_code_).substr(0, p.size()) != p) return false;
  return public_code_.size() == p.size() || public_code_[p.size()] == ' ';
}

namespace {

// `exit_code`'s parameter is an i32 in its one canonical spelling (what formatting the number
// writes): an optional '-', no leading zeros, no "-0", within range.
bool canonical_i32(std::string_view s) {
  std::string_view digits = s.starts_with('-') ? s.substr(1) : s;
  if (digits.empty() || digits.size() > 10) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  if (digits.size() > 1 && digits[0] == '0') return false;
  if (s == "-0") return false;
  long long v = std::stoll(std::string(s));
  return v >= -2147483648LL && v <= 2147483647LL;
}

}  // namespace

Result<VmError> VmError::parse(std::string_view wire) {
  std::string_view code = wire;
  std::string_view detail;
  if (std::size_t hash = wire.find(" # "); hash != std::string_view::npos) {
    code = wire.substr(0, hash);
    detail = wire.substr(hash + 3);
  }
  if (code.find('#') != std::string_view::npos) {
    return make_error("unknown_vm_error", "a public code never contains '#': '" + std::string(wire) + "'");
  }
  for (const VmErrorNode& n : kVmErrorNodes) {
    if (!n.is_code || !n.wire.empty()) continue;  // aliases are never on the wire
    if (code == n.path && !n.takes_param) return VmError(std::string(code), std::string(detail));
    if (n.takes_param && code.size() > n.path.size() + 1 && code.substr(0, n.path.size()) == n.path &&
        code[n.path.size()] == ' ') {
      std::string_view param = code.substr(n.path.size() + 1);
      bool ok = param.find(' ') == std::string_view::npos && (n.path != "exit_code" || canonical_i32(param));
      if (ok) return VmError(std::string(code), std::string(detail));
    }
  }
  return make_error("unknown_vm_error", "unknown VM error code '" + std::string(code) + "'");
}

}  // namespace genvm
