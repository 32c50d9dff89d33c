#include "http/url_check.h"

#include <curl/curl.h>

#include <memory>
#include <string>

namespace stagegate::http {
namespace {

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
struct CurlFree {
  void operator()(char* text) const { curl_free(text); }
};

std::string Part(CURLU* url, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, 0) != CURLUE_OK || text == nullptr) return "";
  std::unique_ptr<char, CurlFree> owned(text);
  return owned.get();
}

}  // namespace

Status CheckHttpUrl(std::string_view url) {
  for (char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f)
      return Status::InvalidInput("must not contain spaces or control characters");
  }
  std::unique_ptr<CURLU, UrlDeleter> parsed(curl_url());
  if (!parsed) return Status::Internal("out of memory");
  const std::string text(url);
  const CURLUcode code = curl_url_set(parsed.get(), CURLUPART_URL, text.c_str(), 0);
  if (code != CURLUE_OK)
    return Status::InvalidInput(std::string("is not an absolute URL (") + curl_url_strerror(code) +
                                ")");
  const std::string scheme = Part(parsed.get(), CURLUPART_SCHEME);
  if (scheme != "http" && scheme != "https")
    return Status::InvalidInput("must be an http:// or https:// URL, not " + scheme + "://");
  if (Part(parsed.get(), CURLUPART_HOST).empty()) return Status::InvalidInput("has no host");
  return Status::Ok();
}

Status CheckBaseUrlToKeep(std::string_view url) {
  if (Status checked = CheckHttpUrl(url); !checked.ok()) return checked;
  std::unique_ptr<CURLU, UrlDeleter> parsed(curl_url());
  if (!parsed) return Status::Internal("out of memory");
  const std::string text(url);
  curl_url_set(parsed.get(), CURLUPART_URL, text.c_str(), 0);
  if (!Part(parsed.get(), CURLUPART_USER).empty() ||
      !Part(parsed.get(), CURLUPART_PASSWORD).empty())
    return Status::InvalidInput(
        "holds a user or password, which the file written would then hold: give the key through "
        "an environment variable (--api-key-env; in Kubernetes, a Secret) instead");
  if (text.find('?') != std::string::npos)
    return Status::InvalidInput(
        "holds a query string ('?...'), which would come before every path the requests add: "
        "give a key through --api-key-env, and other values as a stage's headers");
  if (text.find('#') != std::string::npos)
    return Status::InvalidInput("holds a fragment ('#...'), which is never sent: leave it out");
  std::string path = Part(parsed.get(), CURLUPART_PATH);
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  for (const std::string_view endpoint :
       {"/chat/completions", "/completions", "/embeddings", "/models"})
    if (path.ends_with(endpoint))
      return Status::InvalidInput(
          "is an endpoint, not a base URL: give what comes before '" + std::string(endpoint) +
          "' (such as http://host:8000/v1); the requests add the endpoint's path");
  return Status::Ok();
}

}  // namespace stagegate::http
