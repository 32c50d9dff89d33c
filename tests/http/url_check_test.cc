// What a base URL that a file or manifest will hold may not carry: a credential, a query string,
// a fragment, or an endpoint's own path.

#include "http/url_check.h"

#include <catch2/catch.hpp>
#include <string>

namespace stagegate::http {
namespace {

TEST_CASE("CheckBaseUrlToKeep takes a plain base URL and says what is wrong with any other",
          "[http]") {
  for (const char* good : {"http://127.0.0.1:8000", "http://127.0.0.1:8000/v1",
                           "https://api.example/openai/v1/", "http://[::1]:9/v1"})
    CHECK(CheckBaseUrlToKeep(good).ok());
  const auto problem = [](const char* url) { return CheckBaseUrlToKeep(url).message(); };
  CHECK(problem("http://u:p@h/v1").starts_with("holds a user or password"));
  CHECK(problem("http://u@h/v1").starts_with("holds a user or password"));
  CHECK(problem("http://h/v1?api-key=S").starts_with("holds a query string"));
  CHECK(problem("http://h/v1?").starts_with("holds a query string"));
  CHECK(problem("http://h/v1#frag").starts_with("holds a fragment"));
  CHECK(problem("http://h/v1/chat/completions") ==
        "is an endpoint, not a base URL: give what comes before '/chat/completions' (such as "
        "http://host:8000/v1); the requests add the endpoint's path");
  CHECK(problem("http://h/v1/completions//").starts_with("is an endpoint"));
  CHECK(problem("http://h/v1/models").starts_with("is an endpoint"));
  CHECK(problem("ftp://h/v1").starts_with("must be an http:// or https:// URL"));
  CHECK(problem("http://h/a b") == "must not contain spaces or control characters");
  CHECK(CheckBaseUrlToKeep("http://h/v1/completions-proxy").ok());
}

}  // namespace
}  // namespace stagegate::http
