#include "tokenize/nfc.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

#include "base/strings.h"

namespace stagegate::tokenize {
namespace {

void AppendNfc(std::string_view run, std::string& out) {
  if (run.empty()) return;
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  const icu::StringPiece piece(run.data(), static_cast<int32_t>(run.size()));
  if (U_SUCCESS(status) && nfc->isNormalizedUTF8(piece, status) && U_SUCCESS(status)) {
    out.append(run);
    return;
  }
  std::string normalized;
  icu::StringByteSink<std::string> sink(&normalized);
  status = U_ZERO_ERROR;
  if (nfc != nullptr) nfc->normalizeUTF8(0, piece, sink, nullptr, status);
  out.append(U_SUCCESS(status) ? std::string_view(normalized) : run);
}

}  // namespace

std::string ToNfc(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t run_start = 0;
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Utf8Sequence sequence = NextUtf8Sequence(text.substr(i));
    if (!sequence.valid) {
      AppendNfc(text.substr(run_start, i - run_start), out);
      out.append(text.substr(i, sequence.length));
      run_start = i + sequence.length;
    }
    i += sequence.length;
  }
  AppendNfc(text.substr(run_start), out);
  return out;
}

}  // namespace stagegate::tokenize
