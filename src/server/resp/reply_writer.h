// resp::ReplyWriter: appends RESP2 or RESP3 replies to a connection's output buffer.
//
// Handlers say what they mean (a map, a null, a double) and the writer picks the encoding of
// the protocol the client negotiated with HELLO, as Redis does:
//
//   what          RESP2                  RESP3
//   null          $-1                    _
//   null array    *-1                    _
//   map of n      *2n (flat pairs)       %n
//   set of n      *n                     ~n
//   double        $<len> bulk string     ,<d>
//   boolean       :1 / :0                #t / #f
//   verbatim      $<len> bulk string     =<len> txt:...
//
// Appending never fails and never flushes: the connection writes the whole batch at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace chronocached::resp {

class ReplyWriter {
 public:
  explicit ReplyWriter(std::string& out) : out_(&out), target_(&out) {}

  void set_protocol(int version) { resp3_ = version == 3; }
  bool resp3() const { return resp3_; }
  std::string& buffer() { return *out_; }

  void simple(std::string_view text);  // +text
  void ok() { out_->append("+OK\r\n", 5); }
  // -text; `text` starts with the error code ("ERR ...", "WRONGTYPE ..."). CR and LF in it
  // are written as spaces.
  void error(std::string_view text);
  void integer(long long value);
  void bulk(std::string_view bytes);
  void null();
  void null_array();
  void array(std::size_t count);
  void map(std::size_t pairs);
  void set(std::size_t count);
  void push(std::size_t count);  // RESP3 out-of-band; RESP2: an array
  void double_value(double value);
  void boolean(bool value);
  void verbatim(std::string_view text);      // RESP3 "txt" verbatim string; RESP2 bulk
  void big_number(std::string_view digits);  // RESP3 (digits; RESP2 bulk
  // RESP3 only (callers check resp3()): `pairs` attribute pairs, then the reply they annotate.
  void attribute(std::size_t pairs) { header('|', static_cast<long long>(pairs)); }
  // An array of simple strings: the HELP replies.
  void simple_lines(std::span<const std::string_view> lines) {
    array(lines.size());
    for (std::string_view line : lines) simple(line);
  }

  // Bytes written so far (in the buffer written to now: see set_silenced).
  std::size_t mark() const { return out_->size(); }
  void truncate_to(std::size_t mark) { out_->resize(mark); }

  // CLIENT REPLY OFF and SKIP: while silenced, replies go to a scratch buffer that is never
  // sent. So a reply is dropped when it is written while silenced, as Redis decides per reply
  // (prepareClientToWrite), which keeps the right parts of an EXEC that switches; and the
  // caller can still read what a command answered, to count its errors. Switching changes
  // what buffer() and mark() refer to.
  void set_silenced(bool silenced) { out_ = silenced ? &scratch_ : target_; }
  // Empties the scratch buffer; between requests, when no mark() into it is held.
  void drop_silenced() { scratch_.clear(); }

 private:
  void header(char type, long long n);
  std::string* out_;
  std::string* target_;  // the connection's output
  std::string scratch_;
  bool resp3_ = false;
};

// Redis 7.0's formatting of a double: %.17g, "inf", "-inf", "nan".
std::string format_double(double value);
// INCRBYFLOAT's form: %.17Lf with trailing zeros (and a trailing dot) removed.
std::string format_long_double(long double value);

}  // namespace chronocached::resp
