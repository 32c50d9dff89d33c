#include "http/curl_handles.h"

#include <mutex>

#include "base/http_header.h"

namespace stagegate::http {

void EnsureCurlGlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HeaderList MakeHeaderList(const std::vector<std::string>& headers) {
  curl_slist* list = nullptr;
  for (const std::string& header : headers) {
    // Callers check what users give; a CR or LF that got past them would start a header (or a
    // body) of its own on the wire, so such a line is never sent.
    if (!SafeHeaderLine(header)) continue;
    curl_slist* grown = curl_slist_append(list, header.c_str());
    if (grown == nullptr) break;  // out of memory: send what we have rather than crash
    list = grown;
  }
  return HeaderList(list);
}

}  // namespace stagegate::http
