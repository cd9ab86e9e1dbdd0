// COMMAND and its subcommands (COUNT INFO DOCS LIST GETKEYS GETKEYSANDFLAGS HELP): the command
// table described to clients in Redis 7.0's reply shapes, built from the CommandSpec tables.
//
// Clients read these replies structurally: redis-py's COMMAND parser indexes the ten fields of
// COMMAND INFO, redis-cli 7 builds its help and hints from COMMAND DOCS at startup (and asserts
// on every field's type). So the shapes are Redis's exactly; the contents are as rich as the
// specs are.
//
// CommandSpec::arguments, the COMMAND DOCS "arguments" tree, is written one argument per
// space-separated word:
//
//   name:type            an argument; type is key, string, integer, double, pattern or unix-time
//                        (the name may hold a ':' itself: "ip:port:string")
//   TOKEN=name:type      an argument that follows a token ("COUNT=count:integer")
//   TOKEN                a pure token (its name is the token in lower case: "NX" is nx)
//   name(a|b|...)        one of the alternatives, each written as above
//   name{a,b,...}        a block: the arguments in order
//   ?word                optional          word...   repeatable     word...+  repeatable with
//                                                                               its token each time
//
// SET is "key:key value:string ?condition(NX|XX) ?GET ?expiration(EX=seconds:integer|
// PX=milliseconds:integer|EXAT=unix-time-seconds:unix-time|PXAT=unix-time-milliseconds:unix-time|
// KEEPTTL)" (one word per argument, no spaces inside a word). Key arguments get key_spec_index
// 0, 1, ... in order.
#pragma once

#include <span>
#include <string>

#include "server/commands/command.h"

namespace chronocached {

// COMMAND with no subcommand: every command's COMMAND INFO entry.
void command_all(CommandContext& ctx);
// COMMAND's subcommands, for its CommandSpec.
std::span<const CommandSpec> command_subcommands();

// "get", or "config|get" for a subcommand: the name COMMAND, CLIENT LIST and INFO use.
std::string full_command_name(const CommandSpec& spec);

}  // namespace chronocached
