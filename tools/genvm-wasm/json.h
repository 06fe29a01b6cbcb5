// A small JSON reader for wast2json output (objects, arrays, strings, numbers kept as text).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace genvm_wasm_tool {

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  std::string text;  // string contents, or number text, or "true"/"false"
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  const Json* get(const std::string& k) const {
    auto it = fields.find(k);
    return it == fields.end() ? nullptr : &it->second;
  }
  std::string str(const std::string& k, const std::string& def = "") const {
    const Json* j = get(k);
    return j ? j->text : def;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}
  std::optional<Json> parse() {
    Json j;
    if (!value(j)) return std::nullopt;
    ws();
    if (i_ != s_.size()) return std::nullopt;
    return j;
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool string(std::string& out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        char e = s_[i_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            if (i_ + 4 > s_.size()) return false;
            unsigned cp = std::stoul(s_.substr(i_, 4), nullptr, 16);
            i_ += 4;
            if (cp >= 0xd800 && cp <= 0xdbff && i_ + 6 <= s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
              unsigned lo = std::stoul(s_.substr(i_ + 2, 4), nullptr, 16);
              i_ += 6;
              cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp < 0x80) out += char(cp);
            else if (cp < 0x800) { out += char(0xc0 | (cp >> 6)); out += char(0x80 | (cp & 0x3f)); }
            else if (cp < 0x10000) { out += char(0xe0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3f)); out += char(0x80 | (cp & 0x3f)); }
            else { out += char(0xf0 | (cp >> 18)); out += char(0x80 | ((cp >> 12) & 0x3f)); out += char(0x80 | ((cp >> 6) & 0x3f)); out += char(0x80 | (cp & 0x3f)); }
            break;
          }
          default: out += e;
        }
      } else {
        out += c;
      }
    }
    if (i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  bool value(Json& j) {
    ws();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') {
      j.kind = Json::kObject;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') { ++i_; return true; }
      for (;;) {
        ws();
        std::string k;
        if (!string(k)) return false;
        ws();
        if (i_ >= s_.size() || s_[i_] != ':') return false;
        ++i_;
        Json v;
        if (!value(v)) return false;
        j.fields[k] = std::move(v);
        ws();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == '}') { ++i_; return true; }
        return false;
      }
    }
    if (c == '[') {
      j.kind = Json::kArray;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') { ++i_; return true; }
      for (;;) {
        Json v;
        if (!value(v)) return false;
        j.items.push_back(std::move(v));
        ws();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == ']') { ++i_; return true; }
        return false;
      }
    }
    if (c == '"') {
      j.kind = Json::kString;
      return string(j.text);
    }
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' && s_[i_] != '\n') ++i_;
    j.text = s_.substr(start, i_ - start);
    if (j.text == "null") j.kind = Json::kNull;
    else if (j.text == "true" || j.text == "false") j.kind = Json::kBool;
    else j.kind = Json::kNumber;
    return !j.text.empty();
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace genvm_wasm_tool
