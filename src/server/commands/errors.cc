#include "server/commands/errors.h"

#include <algorithm>
#include <cctype>

namespace chronocached::errors {

std::string unknown_command(std::string_view name, std::span<const std::string_view> args) {
  // Redis formats with printf's %s: every string stops at its first NUL byte.
  const auto c_string = [](std::string_view s) { return s.substr(0, s.find('\0')); };
  // 128 bytes of the name; arguments quoted while under 128 bytes in total, each cut to what
  // is left of those 128 (Redis 7.0's processCommand).
  std::string quoted;
  for (std::size_t i = 0; i < args.size() && quoted.size() < 128; ++i) {
    const std::size_t room = 128 - quoted.size();
    quoted.push_back('\'');
    quoted.append(c_string(args[i]).substr(0, room));
    quoted.append("' ");
  }
  std::string text = "ERR unknown command '";
  text.append(c_string(name).substr(0, 128));
  text.append("', with args beginning with: ");
  text.append(quoted);
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
