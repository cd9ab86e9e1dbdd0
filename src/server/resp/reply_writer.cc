#include "server/resp/reply_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace chronocached::resp {

void ReplyWriter::header(char type, long long n) {
  char buf[24];
  buf[0] = type;
  const auto [end, ec] = std::to_chars(buf + 1, buf + sizeof(buf) - 2, n);
  end[0] = '\r';
  end[1] = '\n';
  out_->append(buf, static_cast<std::size_t>(end + 2 - buf));
}

void ReplyWriter::simple(std::string_view text) {
  out_->push_back('+');
  out_->append(text);
  out_->append("\r\n", 2);
}

void ReplyWriter::error(std::string_view text) {
  out_->push_back('-');
  const std::size_t start = out_->size();
  out_->append(text);
  // An error is one line. Many quote an argument, which may hold CR or LF: as in Redis's
  // addReplyErrorFormat, they become spaces, so no argument can end the line early and frame
  // its tail as a reply of its own.
  for (std::size_t i = start; i < out_->size(); ++i)
    if ((*out_)[i] == '\r' || (*out_)[i] == '\n') (*out_)[i] = ' ';
  out_->append("\r\n", 2);
}

void ReplyWriter::integer(long long value) { header(':', value); }

void ReplyWriter::bulk(std::string_view bytes) {
  // One capacity check for the three parts (callgrind: GET hit 112 -> 80 instructions here).
  char head[24];
  head[0] = '$';
  char* end = std::to_chars(head + 1, head + sizeof(head), bytes.size()).ptr;
  *end++ = '\r';
  *end++ = '\n';
  const auto head_size = static_cast<std::size_t>(end - head);
  out_->reserve(out_->size() + head_size + bytes.size() + 2);
  out_->append(head, head_size);
  out_->append(bytes);
  out_->append("\r\n", 2);
}

void ReplyWriter::null() {
  if (resp3_) {
    out_->append("_\r\n", 3);
  } else {
    out_->append("$-1\r\n", 5);
  }
}
void ReplyWriter::null_array() { out_->append(resp3_ ? "_\r\n" : "*-1\r\n"); }
void ReplyWriter::array(std::size_t count) { header('*', static_cast<long long>(count)); }
void ReplyWriter::map(std::size_t pairs) {
  header(resp3_ ? '%' : '*', static_cast<long long>(resp3_ ? pairs : pairs * 2));
}
void ReplyWriter::set(std::size_t count) {
  header(resp3_ ? '~' : '*', static_cast<long long>(count));
}
void ReplyWriter::push(std::size_t count) {
  header(resp3_ ? '>' : '*', static_cast<long long>(count));
}

void ReplyWriter::double_value(double value) {
  const std::string text = format_double(value);
  if (resp3_) {
    out_->push_back(',');
    out_->append(text);
    out_->append("\r\n", 2);
  } else {
    bulk(text);
  }
}

void ReplyWriter::boolean(bool value) {
  if (resp3_) {
    out_->append(value ? "#t\r\n" : "#f\r\n");
  } else {
    integer(value ? 1 : 0);
  }
}

void ReplyWriter::verbatim(std::string_view text) {
  if (!resp3_) return bulk(text);
  // A signedness cast between 64-bit types, not a widening.
  // NOLINTNEXTLINE(bugprone-misplaced-widening-cast)
  header('=', static_cast<long long>(text.size() + 4));
  out_->append("txt:");
  out_->append(text);
  out_->append("\r\n", 2);
}

void ReplyWriter::big_number(std::string_view digits) {
  if (!resp3_) return bulk(digits);
  out_->push_back('(');
  out_->append(digits);
  out_->append("\r\n", 2);
}

std::string format_double(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) return "nan";
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", value);  // Redis 7.0's d2string
  return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

std::string format_long_double(long double value) {
  char buf[5120];
  const int n = std::snprintf(buf, sizeof(buf), "%.17Lf", value);
  std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  if (text.find('.') != std::string::npos) {
    while (!text.empty() && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
  }
  if (text == "-0")
    text.erase(0, 1);  // "-0" -> "0" (assigning a literal trips GCC 12's -Wrestrict)
  return text;
}

}  // namespace chronocached::resp
