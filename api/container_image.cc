// The image reference rule. See container_image.h.
#include "api/container_image.h"

namespace cairn::api {
namespace {

bool ImageChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
         c == '/' || c == ':' || c == '@';
}

}  // namespace

std::string ImageReferenceProblem(const std::string& image) {
  if (image.empty()) return "is empty";
  if (image.size() > 255) return "is longer than 255 characters";
  const char first = image[0];
  const bool alnum = (first >= 'a' && first <= 'z') ||
                     (first >= 'A' && first <= 'Z') ||
                     (first >= '0' && first <= '9');
  if (!alnum) return "must start with a letter or digit";
  for (char c : image) {
    if (!ImageChar(c)) return "may hold only letters, digits and . _ - / : @";
  }
  return "";
}

}  // namespace cairn::api
