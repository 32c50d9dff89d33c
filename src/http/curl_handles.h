#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>
#include <vector>

namespace stagegate::http {

/// libcurl's global state, set up once per process (thread-safe; call before any handle is made).
void EnsureCurlGlobalInit();

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

/// Owning handles. A multi handle must outlive the easy handles added to it, and an easy handle
/// must be removed from its multi before it is destroyed.
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using HeaderList = std::unique_ptr<curl_slist, SlistDeleter>;

/// A header list from "Name: value" lines (null when empty), leaving out any holding CR/LF/NUL.
HeaderList MakeHeaderList(const std::vector<std::string>& headers);

}  // namespace stagegate::http
