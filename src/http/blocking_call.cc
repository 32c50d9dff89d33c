#include "http/blocking_call.h"

#include <algorithm>

#include "http/curl_handles.h"

namespace stagegate::http {
namespace {

struct Sink {
  std::string* body;
  size_t max;
};

size_t Keep(char* data, size_t size, size_t count, void* sink_ptr) {
  auto* sink = static_cast<Sink*>(sink_ptr);
  const size_t n = size * count;
  if (sink->body->size() < sink->max)
    sink->body->append(data, std::min(n, sink->max - sink->body->size()));
  return n;
}

}  // namespace

Result<CallReply> Call(const CallRequest& request) {
  EnsureCurlGlobalInit();
  EasyHandle easy(curl_easy_init());
  if (!easy) return Status::Internal("curl_easy_init failed");
  CallReply reply;
  Sink sink{&reply.body, request.max_body};
  char error[CURL_ERROR_SIZE] = "";
  HeaderList headers = MakeHeaderList(request.headers);
  CURL* e = easy.get();
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (!request.body.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_ms));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Keep);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(e);
  if (code != CURLE_OK) return Status::IoError(error[0] != '\0' ? error : curl_easy_strerror(code));
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &reply.status);
  const char* type = nullptr;
  curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type);
  if (type) reply.content_type = type;
  return reply;
}

}  // namespace stagegate::http
