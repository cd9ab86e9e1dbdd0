#include "server/commands/errors.h"

#include <algorithm>
#include <cctype>

namespace chronocached::errors {

std::string unknown_command(std::string_view name, std::span<const std::string_view> args) {
  // Redis quotes at most 128 bytes of the name and of each argument.
  std::string text =
      "ERR unknown command '" + std::string(name.substr(0, 128)) + "', with args beginning with: ";
  for (std::string_view a : args) {
    if (text.size() > 1024) break;
    text.push_back('\'');
    text.append(a.substr(0, 128));
    text.append("' ");
  }
  for (char& c : text)
    if (c == '\r' || c == '\n') c = ' ';
  return text;
}

std::string wrong_arity(std::string_view name) {
  return "ERR wrong number of arguments for '" + std::string(name) + "' command";
}

std::string invalid_expire(std::string_view command) {
  std::string lower(command);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "ERR invalid expire time in '" + lower + "' command";
}

std::string unknown_subcommand(std::string_view sub, std::string_view command) {
  std::string text = "ERR unknown subcommand '" + std::string(sub.substr(0, 128)) + "'. Try " +
                     std::string(command) + " HELP.";
  for (char& c : text)
    if (c == '\r' || c == '\n') c = ' ';
  return text;
}

}  // namespace chronocached::errors
