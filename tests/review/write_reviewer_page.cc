// write_reviewer_page PACKET.json OUT.html: writes the reviewer page for a packet file, for the
// page's browser test (tests/node/reviewer_page_test.mjs).

#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "review/reviewer_page.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: write_reviewer_page PACKET.json OUT.html\n";
    return 2;
  }
  const std::string packet_path = argv[1];
  const std::string page_path = argv[2];
  stagegate::Result<std::string> text = stagegate::ReadFile(packet_path);
  if (!text.ok()) {
    std::cerr << "write_reviewer_page: " << text.status().message() << "\n";
    return 1;
  }
  nlohmann::json packet;
  try {
    packet = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& error) {
    std::cerr << "write_reviewer_page: " << packet_path << ": " << error.what() << "\n";
    return 1;
  }
  const stagegate::Status written =
      stagegate::WriteFileAtomically(page_path, stagegate::review::ReviewerPageHtml(packet));
  if (!written.ok()) {
    std::cerr << "write_reviewer_page: " << written.message() << "\n";
    return 1;
  }
  return 0;
}
