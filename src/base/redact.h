#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stagegate {

/// `url` without the userinfo of its authority: "http://user:pass@host:8000/v1" becomes
/// "http://host:8000/v1". Every URL that is stored, fingerprinted or printed goes through this;
/// the request itself is sent to the URL as given (libcurl turns the userinfo into basic auth).
/// Text that is not a URL with an authority is returned as it is.
std::string UrlWithoutUserinfo(std::string_view url);

/// The forms in which a URL's password can come back from a server: as written in the URL, with
/// its %XX escapes decoded, and the base64 "user:password" of the basic-auth header libcurl
/// sends. Empty when the URL has no password.
std::vector<std::string> UrlSecrets(std::string_view url);

/// The credential of an "Authorization: Scheme credential" (or Proxy-Authorization) header line:
/// what a server could echo back. "" for any other header.
std::string HeaderCredential(std::string_view header);

/// The text put in place of a secret.
inline constexpr std::string_view kRedacted = "[redacted]";

/// Replaces known secret values (API keys, persona tokens, URL passwords) in text that is about
/// to be stored, so that a server echoing a credential cannot put it on disk. A value is also
/// found in its JSON-escaped form, for text that holds JSON. Immutable once filled: safe to share
/// between threads for Apply.
class Redactor {
 public:
  /// Adds a secret; an empty one is ignored.
  void Add(std::string secret);
  void AddAll(const std::vector<std::string>& secrets);
  bool empty() const { return secrets_.empty(); }

  /// `text` with every occurrence of a secret replaced by kRedacted.
  std::string Apply(std::string text) const;

 private:
  std::vector<std::string> secrets_;  // longest first, so a secret that holds another goes whole
};

}  // namespace stagegate
