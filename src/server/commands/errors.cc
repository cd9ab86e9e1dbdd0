#include "server/commands/errors.h"

#include <algorithm>
#include <cctype>

#include "server/base/ascii.h"

namespace chronocached::errors {
namespace {

// "<prefix>'<word>'": the texts that quote one argument.
std::string quoted(std::string_view prefix, std::string_view word) {
  std::string text(prefix);
  text.append(c_string(word)).push_back('\'');
  return text;
}

}  // namespace

std::string unknown_command(std::string_view name, std::span<const std::string_view> args) {
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

std::string upstream_unavailable(std::string_view address, std::string_view reason) {
  std::string text = "ERR upstream ";
  text.append(address).append(" unavailable: ").append(reason);
  return text;
}

std::string unknown_subcommand(std::string_view sub, std::string_view command) {
  return "ERR unknown subcommand '" + std::string(c_string(sub).substr(0, 128)) + "'. Try " +
         std::string(command) + " HELP.";
}

std::string subcommand_syntax(std::string_view sub, std::string_view command) {
  std::string text = "ERR unknown subcommand or wrong number of arguments for '";
  text.append(c_string(sub).substr(0, 128)).append("'. Try ").append(command).append(" HELP.");
  return text;
}

std::string unsupported_option(std::string_view option) {
  std::string text = "ERR Unsupported option ";
  text.append(c_string(option));
  // Redis trims the line ends a formatted error ends with; those inside become spaces.
  while (text.back() == '\r' || text.back() == '\n') text.pop_back();
  return text;
}

std::string hello_option(std::string_view option) {
  return quoted("ERR Syntax error in HELLO option '", option);
}
std::string unknown_client_type(std::string_view type) {
  return quoted("ERR Unknown client type '", type);
}
std::string no_such_user(std::string_view user) { return quoted("ERR No such user '", user); }
std::string config_set_unknown(std::string_view name) {
  return quoted("ERR Unknown option or number of arguments for CONFIG SET - '", name);
}
std::string no_latency_samples(std::string_view event) {
  return quoted("ERR No samples available for event '", event);
}

std::string config_set_failed(std::string_view name, std::string_view problem) {
  std::string text = "ERR CONFIG SET failed (possibly related to argument '";
  text.append(name).append("') - ").append(problem);
  return text;
}

std::string config_rewrite_failed(std::string_view reason) {
  return "ERR Rewriting config file: " + std::string(reason);
}

std::string unknown_argument(std::string_view argument) {
  return "ERR Unknown argument " + std::string(c_string(argument));
}

std::string exec_abort_because(std::string_view error) {
  std::string why = "EXECABORT Transaction discarded because of: ";
  why.append(error.starts_with("ERR ") ? error.substr(4) : error);
  return why;
}

}  // namespace chronocached::errors
