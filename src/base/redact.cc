#include "base/redact.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "base/strings.h"

namespace stagegate {
namespace {

// Where the authority's userinfo ("user:pass@") lies in `url`: [begin, end) including the '@',
// or begin == end when there is none.
std::pair<size_t, size_t> UserinfoSpan(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {0, 0};
  const size_t begin = scheme + 3;
  size_t authority_end = url.find_first_of("/?#", begin);
  if (authority_end == std::string_view::npos) authority_end = url.size();
  const size_t at = url.substr(0, authority_end).rfind('@');
  if (at == std::string_view::npos || at < begin) return {begin, begin};
  return {begin, at + 1};
}

std::string PercentDecoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string Base64(std::string_view data) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < data.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16;
    if (i + 1 < data.size())
      n |= static_cast<uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8;
    if (i + 2 < data.size()) n |= static_cast<unsigned char>(data[i + 2]);
    out += kDigits[(n >> 18) & 63];
    out += kDigits[(n >> 12) & 63];
    out += i + 1 < data.size() ? kDigits[(n >> 6) & 63] : '=';
    out += i + 2 < data.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

// `text` as it appears inside a JSON string.
std::string JsonEscaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string UrlWithoutUserinfo(std::string_view url) {
  const auto [begin, end] = UserinfoSpan(url);
  std::string out(url);
  out.erase(begin, end - begin);
  return out;
}

std::vector<std::string> UrlSecrets(std::string_view url) {
  const auto [begin, end] = UserinfoSpan(url);
  if (begin == end) return {};
  const std::string_view userinfo = url.substr(begin, end - 1 - begin);
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos || colon + 1 == userinfo.size()) return {};
  const std::string_view password = userinfo.substr(colon + 1);
  return {std::string(password), PercentDecoded(password),
          Base64(PercentDecoded(userinfo.substr(0, colon)) + ":" + PercentDecoded(password))};
}

std::string HeaderCredential(std::string_view header) {
  const size_t colon = header.find(':');
  if (colon == std::string_view::npos) return "";
  std::string name(Trim(header.substr(0, colon)));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name != "authorization" && name != "proxy-authorization") return "";
  std::string_view value = Trim(header.substr(colon + 1));
  // "Bearer sk-..." or "Basic dXNlcjpwYXNz": the credential follows the scheme; a value without
  // a scheme is a credential as a whole.
  const size_t space = value.find(' ');
  if (space != std::string_view::npos) value = Trim(value.substr(space + 1));
  return std::string(value);
}

void Redactor::Add(std::string secret) {
  if (secret.empty()) return;
  for (std::string form : {JsonEscaped(secret), std::move(secret)}) {
    if (std::find(secrets_.begin(), secrets_.end(), form) != secrets_.end()) continue;
    secrets_.push_back(std::move(form));
  }
  std::stable_sort(secrets_.begin(), secrets_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

void Redactor::AddAll(const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets)
    Add(secret);
}

std::string Redactor::Apply(std::string text) const {
  for (const std::string& secret : secrets_)
    if (text.find(secret) != std::string::npos)
      text = ReplaceAll(std::move(text), secret, kRedacted);
  return text;
}

}  // namespace stagegate
