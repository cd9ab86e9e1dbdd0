#include "server/commands/command_docs.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>
#include <vector>

#include "server/base/words.h"
#include "server/commands/arguments.h"
#include "server/commands/command_keys.h"
#include "server/commands/command_table.h"
#include "server/commands/errors.h"
#include "server/commands/glob.h"

namespace chronocached {
namespace {

// ---- Flags and ACL categories, named and ordered as Redis 7.0 reports them ------------------

struct FlagName {
  std::uint32_t flag;
  std::string_view name;
};

// kNoMulti is not listed: ours means "not queued by MULTI", not Redis's "refused in MULTI".
constexpr FlagName kFlagNames[] = {
    {kWrite, "write"},
    {kReadOnly, "readonly"},
    {kDenyOom, "denyoom"},
    {kAdmin, "admin"},
    {kPubSub, "pubsub"},
    {kNoScript, "noscript"},
    {kLoading, "loading"},
    {kStale, "stale"},
    {kSkipSlowlog, "skip_slowlog"},
    {kAsking, "asking"},
    {kFast, "fast"},
    {kNoAuth, "no_auth"},
    {kNoAsyncLoading, "no_async_loading"},
    {kRefusedInMulti, "no_multi"},
    {kAllowBusy, "allow_busy"},
    {kMovableKeys, "movablekeys"},
};

// Redis's ACL category order (acl.c ACLCommandCategories).
constexpr std::string_view kAclCategories[] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting",
};

bool has_word(std::string_view words, std::string_view word) {
  const std::vector<std::string_view> list = words_of(words);
  return std::ranges::find(list, word) != list.end();
}

// The spec's categories plus the ones Redis implies from its flags (setImplicitACLCategories),
// in Redis's order.
std::vector<std::string_view> acl_categories(const CommandSpec& spec) {
  std::vector<std::string_view> out;
  const bool fast = has_word(spec.acl, "fast") || (spec.flags & kFast) != 0;
  for (std::string_view cat : kAclCategories) {
    bool present = has_word(spec.acl, cat);
    if (cat == "write") present |= (spec.flags & kWrite) != 0;
    if (cat == "read") present |= (spec.flags & kReadOnly) != 0;
    if (cat == "admin" || cat == "dangerous") present |= (spec.flags & kAdmin) != 0;
    if (cat == "pubsub") present |= (spec.flags & kPubSub) != 0;
    if (cat == "fast") present = fast;
    if (cat == "slow") present = !fast;
    if (present) out.push_back(cat);
  }
  return out;
}

bool in_category(const CommandSpec& spec, std::string_view category) {
  for (std::string_view cat : acl_categories(spec))
    if (iequals(cat, category)) return true;
  return false;
}

// The space-separated words of `text` as a RESP set: simple strings (key-spec flags), or bulk
// strings (tips), as Redis writes each.
enum class WordsAs { kSimple, kBulk };
void write_words(resp::ReplyWriter& w, std::string_view text, WordsAs as = WordsAs::kSimple) {
  const std::vector<std::string_view> words = words_of(text);
  w.set(words.size());
  for (std::string_view word : words) {
    if (as == WordsAs::kBulk) {
      w.bulk(word);
    } else {
      w.simple(word);
    }
  }
}

// ---- The arguments grammar (see command_docs.h) ----------------------------------------------

struct DocArgument {
  std::string_view name;  // empty for a pure token: its name is `lowered`
  std::string lowered;    // owned: a view of it would dangle when the argument moves
  std::string_view type;
  std::string_view token;
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;
  int key_spec_index = -1;
  std::vector<DocArgument> children;
};

// Splits `text` at `separator` outside brackets.
std::vector<std::string_view> split_top_level(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '{') ++depth;
    if (c == ')' || c == '}') --depth;
    if (c == separator && depth == 0) {
      if (i > start) parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < text.size()) parts.push_back(text.substr(start));
  return parts;
}

// Key arguments take their key spec's index in order, up to the command's last spec: a
// command whose one spec covers all its keys (LCS, DEL) gives them all 0; COPY's source is 0,
// its destination 1.
struct KeyNumbering {
  int next = 0;
  int last = 0;
};

DocArgument parse_argument(std::string_view word, KeyNumbering& keys) {
  DocArgument arg;
  if (!word.empty() && word.front() == '?') {
    arg.optional = true;
    word.remove_prefix(1);
  }
  if (word.ends_with("...+")) {
    arg.multiple = arg.multiple_token = true;
    word.remove_suffix(4);
  } else if (word.ends_with("...")) {
    arg.multiple = true;
    word.remove_suffix(3);
  }
  const std::size_t equals = word.find_first_of("=({:");
  if (equals != std::string_view::npos && word[equals] == '=') {
    arg.token = word.substr(0, equals);
    word.remove_prefix(equals + 1);
  }
  const std::size_t bracket = word.find_first_of("({");
  const std::size_t colon = word.find(':');
  if (bracket != std::string_view::npos && (colon == std::string_view::npos || bracket < colon)) {
    const bool oneof = word[bracket] == '(';
    arg.name = word.substr(0, bracket);
    arg.type = oneof ? "oneof" : "block";
    std::string_view inner = word.substr(bracket + 1);
    if (!inner.empty() && (inner.back() == ')' || inner.back() == '}')) inner.remove_suffix(1);
    for (std::string_view part : split_top_level(inner, oneof ? '|' : ','))
      arg.children.push_back(parse_argument(part, keys));
  } else if (colon != std::string_view::npos) {
    const std::size_t last_colon = word.rfind(':');  // names may hold one: "ip:port:string"
    arg.name = word.substr(0, last_colon);
    arg.type = word.substr(last_colon + 1);
    if (arg.type == "key") arg.key_spec_index = std::min(keys.next++, keys.last);
  } else {
    arg.type = "pure-token";
    if (arg.token.empty()) arg.token = word;
    for (char c : word)
      arg.lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return arg;
}

std::vector<DocArgument> parse_arguments(const CommandSpec& spec) {
  std::vector<DocArgument> args;
  KeyNumbering keys{.last = std::max(1, static_cast<int>(spec.key_specs.size())) - 1};
  for (std::string_view word : split_top_level(spec.arguments, ' '))
    args.push_back(parse_argument(word, keys));
  return args;
}

void write_argument(resp::ReplyWriter& w, const DocArgument& arg) {
  const std::size_t flag_count =
      (arg.optional ? 1u : 0u) + (arg.multiple ? 1u : 0u) + (arg.multiple_token ? 1u : 0u);
  w.map(2 + (arg.key_spec_index >= 0 ? 1 : 0) + (arg.token.empty() ? 0 : 1) +
        (flag_count > 0 ? 1 : 0) + (arg.children.empty() ? 0 : 1));
  w.bulk("name");
  w.bulk(arg.lowered.empty() ? arg.name : std::string_view(arg.lowered));
  w.bulk("type");
  w.bulk(arg.type);
  if (arg.key_spec_index >= 0) {
    w.bulk("key_spec_index");
    w.integer(arg.key_spec_index);
  }
  if (!arg.token.empty()) {
    w.bulk("token");
    w.bulk(arg.token);
  }
  if (flag_count > 0) {
    w.bulk("flags");
    w.set(flag_count);
    if (arg.optional) w.simple("optional");
    if (arg.multiple) w.simple("multiple");
    if (arg.multiple_token) w.simple("multiple_token");
  }
  if (!arg.children.empty()) {
    w.bulk("arguments");
    w.array(arg.children.size());
    for (const DocArgument& child : arg.children) write_argument(w, child);
  }
}

// ---- Lookups ---------------------------------------------------------------------------------

const CommandSpec* find_subcommand(const CommandSpec& parent, std::string_view name) {
  for (const CommandSpec& sub : parent.subcommands)
    if (iequals(sub.name, name)) return &sub;
  return nullptr;
}

// "get" or "config|get" (any case), as COMMAND INFO and DOCS take names.
const CommandSpec* find_by_full_name(std::string_view name) {
  const std::size_t bar = name.find('|');
  const CommandSpec* spec = find_command(name.substr(0, bar));
  if (spec == nullptr || bar == std::string_view::npos) return spec;
  return find_subcommand(*spec, name.substr(bar + 1));
}

const CommandSpec* parent_of(const CommandSpec& spec) {
  for (const CommandSpec* top : all_commands()) {
    for (const CommandSpec& sub : top->subcommands)
      if (&sub == &spec) return top;
  }
  return nullptr;
}

// ---- Replies -----------------------------------------------------------------------------------

// One key spec as COMMAND INFO shows it: notes (when it has them), flags, where the keys begin,
// how many follow.
void write_key_spec(resp::ReplyWriter& w, const KeySpec& ks) {
  w.map(ks.notes.empty() ? 3 : 4);
  if (!ks.notes.empty()) {
    w.bulk("notes");
    w.bulk(ks.notes);
  }
  w.bulk("flags");
  write_words(w, ks.flags);
  // {type: <type>, spec: {...}}, the spec's map left for the caller to fill.
  const auto typed = [&w](std::string_view what, std::string_view type, std::size_t fields) {
    w.bulk(what);
    w.map(2);
    w.bulk("type");
    w.bulk(type);
    w.bulk("spec");
    w.map(fields);
  };
  const auto number = [&w](std::string_view name, long long value) {
    w.bulk(name);
    w.integer(value);
  };
  if (ks.keyword.empty()) {
    typed("begin_search", "index", 1);
    number("index", ks.index);
  } else {
    typed("begin_search", "keyword", 2);
    w.bulk("keyword");
    w.bulk(ks.keyword);
    number("startfrom", ks.startfrom);
  }
  typed("find_keys", "range", 3);
  number("lastkey", ks.lastkey);
  number("keystep", ks.keystep);
  number("limit", ks.limit);
}

void write_info(resp::ReplyWriter& w, const CommandSpec& spec, const CommandSpec* parent) {
  w.array(10);
  if (parent != nullptr) {
    std::string name(parent->name);
    name.push_back('|');
    name.append(spec.name);
    w.bulk(name);
  } else {
    w.bulk(spec.name);
  }
  w.integer(spec.arity);
  std::size_t flag_count = 0;
  for (const FlagName& f : kFlagNames) flag_count += (spec.flags & f.flag) != 0 ? 1 : 0;
  w.set(flag_count);
  for (const FlagName& f : kFlagNames)
    if ((spec.flags & f.flag) != 0) w.simple(f.name);
  w.integer(spec.first_key);
  w.integer(spec.last_key);
  w.integer(spec.key_step);
  const auto categories = acl_categories(spec);
  w.set(categories.size());
  for (std::string_view cat : categories) {
    std::string text = "@";
    text.append(cat);
    w.simple(text);
  }
  write_words(w, spec.tips, WordsAs::kBulk);
  if (spec.first_key > 0) {
    const KeySpec derived = range_key_spec(spec);
    const std::span<const KeySpec> specs =
        spec.key_specs.empty() ? std::span<const KeySpec>(&derived, 1) : spec.key_specs;
    w.set(specs.size());
    for (const KeySpec& ks : specs) write_key_spec(w, ks);
  } else {
    w.set(0);
  }
  w.set(spec.subcommands.size());
  for (const CommandSpec& sub : spec.subcommands) write_info(w, sub, &spec);
}

void write_docs(resp::ReplyWriter& w, const CommandSpec& spec, const CommandSpec* parent) {
  const std::vector<DocArgument> args = parse_arguments(spec);
  w.map(3 + (spec.complexity.empty() ? 0 : 1) + (args.empty() ? 0 : 1) +
        (spec.subcommands.empty() ? 0 : 1));
  w.bulk("summary");
  w.bulk(spec.summary);
  w.bulk("since");
  w.bulk(spec.since);
  w.bulk("group");
  w.bulk(parent != nullptr ? parent->group : spec.group);  // a subcommand is in its parent's
  if (!spec.complexity.empty()) {
    w.bulk("complexity");
    w.bulk(spec.complexity);
  }
  if (!args.empty()) {
    w.bulk("arguments");
    w.array(args.size());
    for (const DocArgument& arg : args) write_argument(w, arg);
  }
  if (!spec.subcommands.empty()) {
    w.bulk("subcommands");
    w.map(spec.subcommands.size());
    for (const CommandSpec& sub : spec.subcommands) {
      std::string name(spec.name);
      name.push_back('|');
      name.append(sub.name);
      w.bulk(name);
      write_docs(w, sub, &spec);
    }
  }
}

void command_count(CommandContext& ctx) {
  ctx.reply.integer(static_cast<long long>(all_commands().size()));
}

void command_info(CommandContext& ctx) {
  if (ctx.argc() == 2) return command_all(ctx);
  ctx.reply.array(ctx.argc() - 2);
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    const CommandSpec* spec = find_by_full_name(ctx.args[i]);
    if (spec == nullptr) {
      ctx.reply.null();
    } else {
      write_info(ctx.reply, *spec, parent_of(*spec));
    }
  }
}

void command_docs(CommandContext& ctx) {
  std::vector<const CommandSpec*> found;
  if (ctx.argc() == 2) {
    found.assign(all_commands().begin(), all_commands().end());
  } else {
    for (std::size_t i = 2; i < ctx.argc(); ++i)
      if (const CommandSpec* spec = find_by_full_name(ctx.args[i])) found.push_back(spec);
  }
  ctx.reply.map(found.size());
  for (const CommandSpec* spec : found) {
    const CommandSpec* parent = parent_of(*spec);
    ctx.reply.bulk(full_command_name(*spec));
    write_docs(ctx.reply, *spec, parent);
  }
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
void command_list(CommandContext& ctx) {
  enum class Filter { kNone, kModule, kAclCat, kPattern } filter = Filter::kNone;
  std::string_view argument;
  for (std::size_t i = 2; i < ctx.argc(); i += 3) {
    if (!option_is(ctx.args[i], "FILTERBY") || ctx.argc() - 1 - i != 2)
      return ctx.reply.error(errors::kSyntax);
    const std::string_view type = ctx.args[i + 1];
    if (option_is(type, "MODULE")) {
      filter = Filter::kModule;
    } else if (option_is(type, "ACLCAT")) {
      filter = Filter::kAclCat;
    } else if (option_is(type, "PATTERN")) {
      filter = Filter::kPattern;
    } else {
      return ctx.reply.error(errors::kSyntax);
    }
    argument = ctx.args[i + 2];
  }
  std::vector<std::string> names;
  const auto consider = [&](const CommandSpec& spec, const CommandSpec* parent) {
    std::string name(parent != nullptr ? parent->name : spec.name);
    if (parent != nullptr) {
      name.push_back('|');
      name.append(spec.name);
    }
    const bool keep = filter == Filter::kNone ||
                      (filter == Filter::kAclCat && in_category(spec, argument)) ||
                      (filter == Filter::kPattern && glob_match(argument, name, true));
    if (keep) names.push_back(std::move(name));
  };
  for (const CommandSpec* spec : all_commands()) {
    consider(*spec, nullptr);
    for (const CommandSpec& sub : spec->subcommands) consider(sub, spec);
  }
  ctx.reply.array(names.size());
  for (const std::string& name : names) ctx.reply.bulk(name);
}

// COMMAND GETKEYS / GETKEYSANDFLAGS <command> [arg ...]
void get_keys(CommandContext& ctx, bool with_flags) {
  const auto command = ctx.args.subspan(2);
  const CommandSpec* spec = find_command(command[0]);
  if (spec != nullptr && !spec->subcommands.empty() && command.size() >= 2)
    spec = find_subcommand(*spec, command[1]);
  if (spec == nullptr) return ctx.reply.error(errors::kInvalidCommand);
  if (spec->first_key <= 0) return ctx.reply.error(errors::kCommandHasNoKeys);
  const auto argc = static_cast<long long>(command.size());
  if ((spec->arity > 0 && spec->arity != argc) || argc < -spec->arity)
    return ctx.reply.error(errors::kCommandKeysArity);
  struct Key {
    std::string_view name;
    std::string_view flags;
  };
  std::vector<Key> keys;
  for_each_key(*spec, command, [&](std::string_view key, std::string_view flags) {
    keys.push_back({key, flags});
  });
  if (keys.empty()) return ctx.reply.error(errors::kCommandKeysArguments);
  ctx.reply.array(keys.size());
  for (const Key& key : keys) {
    if (!with_flags) {
      ctx.reply.bulk(key.name);
      continue;
    }
    ctx.reply.array(2);
    ctx.reply.bulk(key.name);
    write_words(ctx.reply, key.flags);
  }
}

void command_getkeys(CommandContext& ctx) { get_keys(ctx, false); }
void command_getkeysandflags(CommandContext& ctx) { get_keys(ctx, true); }

void command_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

constexpr std::uint32_t kIntrospection = kLoading | kStale;

constexpr CommandSpec kSubcommands[] = {
    {.name = "count",
     .arity = 2,
     .flags = kIntrospection,
     .handler = command_count,
     .summary = "Get total number of Redis commands",
     .since = "2.8.13",
     .complexity = "O(1)",
     .acl = "connection"},
    {.name = "docs",
     .arity = -2,
     .flags = kIntrospection,
     .handler = command_docs,
     .summary = "Get array of specific Redis command documentation",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of commands to look up",
     .acl = "connection",
     .arguments = "?command-name:string...",
     .tips = "nondeterministic_output_order"},
    {.name = "getkeys",
     .arity = -4,
     .flags = kIntrospection,
     .handler = command_getkeys,
     .summary = "Extract keys given a full Redis command",
     .since = "2.8.13",
     .complexity = "O(N) where N is the number of arguments to the command",
     .acl = "connection"},
    {.name = "getkeysandflags",
     .arity = -4,
     .flags = kIntrospection,
     .handler = command_getkeysandflags,
     .summary = "Extract keys and access flags given a full Redis command",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of arguments to the command",
     .acl = "connection"},
    {.name = "help",
     .arity = 2,
     .flags = kIntrospection,
     .handler = command_help,
     .summary = "Show helpful text about the different subcommands",
     .since = "5.0.0",
     .complexity = "O(1)",
     .acl = "connection"},
    {.name = "info",
     .arity = -2,
     .flags = kIntrospection,
     .handler = command_info,
     .summary = "Get array of specific Redis command details, or all when no argument is given.",
     .since = "2.8.13",
     .complexity = "O(N) where N is the number of commands to look up",
     .acl = "connection",
     .arguments = "?command-name:string...",
     .tips = "nondeterministic_output_order"},
    {.name = "list",
     .arity = -2,
     .flags = kIntrospection,
     .handler = command_list,
     .summary = "Get an array of Redis command names",
     .since = "7.0.0",
     .complexity = "O(N) where N is the total number of Redis commands",
     .acl = "connection",
     .arguments = "?FILTERBY=filterby(MODULE=module-name:string|ACLCAT=category:string|"
                  "PATTERN=pattern:pattern)",
     .tips = "nondeterministic_output_order"},
};

}  // namespace

void command_all(CommandContext& ctx) {
  const auto all = all_commands();
  ctx.reply.array(all.size());
  for (const CommandSpec* spec : all) write_info(ctx.reply, *spec, nullptr);
}

std::span<const CommandSpec> command_subcommands() { return kSubcommands; }

std::string full_command_name(const CommandSpec& spec) {
  const CommandSpec* parent = parent_of(spec);
  if (parent == nullptr) return std::string(spec.name);
  std::string name(parent->name);
  name.push_back('|');
  name.append(spec.name);
  return name;
}

}  // namespace chronocached
