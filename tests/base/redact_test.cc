#include "base/redact.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace stagegate {
namespace {

TEST_CASE("UrlWithoutUserinfo drops user and password and keeps the rest", "[redact]") {
  CHECK(UrlWithoutUserinfo("http://user:pass@127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1");
  CHECK(UrlWithoutUserinfo("https://token@example.com") == "https://example.com");
  CHECK(UrlWithoutUserinfo("http://u:p%40ss@h/v1?x=a@b") == "http://h/v1?x=a@b");
  // An '@' after the authority is not userinfo; a password may hold '@' escaped or not.
  CHECK(UrlWithoutUserinfo("http://h:1/path@x") == "http://h:1/path@x");
  CHECK(UrlWithoutUserinfo("http://u:a@b@h:1/") == "http://h:1/");
  CHECK(UrlWithoutUserinfo("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1");
  CHECK(UrlWithoutUserinfo("not a url") == "not a url");
  CHECK(UrlWithoutUserinfo("") == "");
}

TEST_CASE("UrlSecrets names the password as written, decoded and as basic auth", "[redact]") {
  // base64("user:p@ss") is dXNlcjpwQHNz.
  CHECK(UrlSecrets("http://user:p%40ss@h/v1") ==
        std::vector<std::string>{"p%40ss", "p@ss", "dXNlcjpwQHNz"});
  CHECK(UrlSecrets("http://user@h/v1").empty());
  CHECK(UrlSecrets("http://h/v1").empty());
}

TEST_CASE("HeaderCredential takes the credential of authorization headers only", "[redact]") {
  CHECK(HeaderCredential("Authorization: Bearer sk-1") == "sk-1");
  CHECK(HeaderCredential("authorization:Basic dTpw") == "dTpw");
  CHECK(HeaderCredential("Proxy-Authorization: sk-2") == "sk-2");
  CHECK(HeaderCredential("X-Team: sk-3").empty());
  CHECK(HeaderCredential("Authorization").empty());
}

TEST_CASE("Redactor replaces every secret, also JSON-escaped, longest first", "[redact]") {
  Redactor redactor;
  CHECK(redactor.Apply("nothing to hide") == "nothing to hide");
  redactor.Add("sk-abc");
  redactor.Add("sk-abc-long");
  redactor.Add("");
  redactor.Add("quo\"te");
  CHECK(redactor.Apply("key sk-abc and sk-abc-long") == "key [redacted] and [redacted]");
  CHECK(redactor.Apply(R"({"a":"quo\"te"})") == R"({"a":"[redacted]"})");
  CHECK(redactor.Apply("quo\"te") == "[redacted]");
  CHECK(redactor.Apply("sk-ab") == "sk-ab");
}

}  // namespace
}  // namespace stagegate
