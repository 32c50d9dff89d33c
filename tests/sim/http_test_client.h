#pragma once

// A small blocking HTTP client for tests of the reference application, on libcurl's easy
// interface. Not the load engine: it exists so that tests see the wire as any client would.

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace stagegate::testing {

struct HttpResult {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  double first_byte_s = 0;                     // time to the first byte of the response
  double total_s = 0;
};

inline size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

inline size_t AppendHeader(char* data, size_t size, size_t count, void* out) {
  std::string line(data, size * count);
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
      value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * count;
}

/// GET when `body` is empty and `method` is GET, else POST `body` as JSON.
inline HttpResult Request(const std::string& url, const std::string& body = "",
                          const std::vector<std::string>& headers = {}, long timeout_ms = 10000,
                          const std::string& method = "") {
  HttpResult result;
  CURL* curl = curl_easy_init();
  curl_slist* list = nullptr;
  for (const std::string& header : headers)
    list = curl_slist_append(list, header.c_str());
  if (!body.empty() || method == "POST") {
    list = curl_slist_append(list, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  if (!method.empty() && method != "POST")
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result.headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  result.code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
  curl_easy_getinfo(curl, CURLINFO_STARTTRANSFER_TIME, &result.first_byte_s);
  curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &result.total_s);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  return result;
}

/// The `data:` payloads of an SSE body, in order (enough for the sim's simple framing).
inline std::vector<std::string> SseData(const std::string& body) {
  std::vector<std::string> events;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    size_t end = body.find("\n\n", at);
    events.push_back(
        body.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6));
    if (end == std::string::npos) break;
    at = end + 2;
  }
  return events;
}

}  // namespace stagegate::testing
