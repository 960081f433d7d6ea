// The chunked transfer coding (RFC 9112, section 7.1).
#include "support/http/chunked_body.h"

#include <algorithm>
#include <cstdio>

namespace lousho::agent {
namespace {

// A line as it can be shown in a message: at most 40 bytes, control bytes as \xNN.
std::string Shown(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (line.size() > 40) out += "...";
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool ChunkedDecoder::Fail(std::string why) {
  state_ = State::kFailed;
  error_ = std::move(why);
  return false;
}

bool ChunkedDecoder::TakeLine(std::string_view bytes, size_t* pos, size_t max, bool* too_long) {
  const size_t lf = bytes.find('\n', *pos);
  const size_t end = lf == std::string_view::npos ? bytes.size() : lf;
  line_.append(bytes.substr(*pos, end - *pos));
  *pos = lf == std::string_view::npos ? bytes.size() : lf + 1;
  *too_long = line_.size() > max;
  if (lf == std::string_view::npos || *too_long) return false;
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  return true;
}

bool ChunkedDecoder::SizeLine(std::string_view line) {
  uint64_t size = 0;
  size_t i = 0;
  for (; i < line.size() && HexDigit(line[i]) >= 0; ++i) {
    if (size >> 56 != 0) return Fail("the chunk size '" + Shown(line) + "' is too large");
    size = size * 16 + static_cast<uint64_t>(HexDigit(line[i]));
  }
  size_t rest = i;
  while (rest < line.size() && (line[rest] == ' ' || line[rest] == '\t')) ++rest;
  if (i == 0 || (rest < line.size() && line[rest] != ';'))
    return Fail("the chunk size line '" + Shown(line) + "' is not a hexadecimal size");
  chunk_size_ = left_ = size;
  ++chunks_;
  state_ = size == 0 ? State::kTrailer : State::kData;
  return true;
}

bool ChunkedDecoder::SizeStep(std::string_view bytes, size_t* pos) {
  bool too_long = false;
  if (!TakeLine(bytes, pos, kMaxLineBytes, &too_long)) {
    return !too_long ||
           Fail("a chunk size line is longer than " + std::to_string(kMaxLineBytes) + " bytes");
  }
  std::string line = std::move(line_);
  line_.clear();
  return SizeLine(line);
}

void ChunkedDecoder::DataStep(std::string_view bytes, size_t* pos, std::string* out,
                              std::vector<size_t>* ends) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(left_, bytes.size() - *pos));
  out->append(bytes.substr(*pos, n));
  *pos += n;
  left_ -= n;
  if (left_ != 0) return;
  state_ = State::kDataEnd;
  if (ends) ends->push_back(out->size());
}

bool ChunkedDecoder::DataEndStep(std::string_view bytes, size_t* pos) {
  // CRLF (a bare LF is taken too) ends the data.
  const char c = bytes[(*pos)++];
  if (c == '\r' && !data_end_cr_) {
    data_end_cr_ = true;
    return true;
  }
  if (c == '\n') {
    data_end_cr_ = false;
    state_ = State::kSize;
    return true;
  }
  return Fail("chunk " + std::to_string(chunks_) + " holds more than the " +
              std::to_string(chunk_size_) + " bytes its size line announced");
}

bool ChunkedDecoder::TrailerStep(std::string_view bytes, size_t* pos) {
  bool too_long = false;
  const size_t before = *pos;
  const bool whole = TakeLine(bytes, pos, kMaxLineBytes, &too_long);
  trailer_bytes_ += *pos - before;
  if (too_long || trailer_bytes_ > kMaxTrailerBytes)
    return Fail("the trailer after the last chunk is longer than " +
                std::to_string(kMaxTrailerBytes) + " bytes");
  if (!whole) return true;
  if (line_.empty()) state_ = State::kDone;
  line_.clear();
  return true;
}

bool ChunkedDecoder::Feed(std::string_view bytes, std::string* out, std::vector<size_t>* ends) {
  size_t pos = 0;
  bool ok = state_ != State::kFailed;
  while (ok && pos < bytes.size()) {
    switch (state_) {
      case State::kSize:
        ok = SizeStep(bytes, &pos);
        break;
      case State::kData:
        DataStep(bytes, &pos, out, ends);
        break;
      case State::kDataEnd:
        ok = DataEndStep(bytes, &pos);
        break;
      case State::kTrailer:
        ok = TrailerStep(bytes, &pos);
        break;
      case State::kDone:
        return true;
      case State::kFailed:
        return false;
    }
  }
  return ok;
}

std::string ChunkedDecoder::WhereCut() const {
  switch (state_) {
    case State::kSize:
      return chunks_ == 0 ? "before the first chunk"
                          : "after " + std::to_string(chunks_) + " chunk(s), before the last one";
    case State::kData:
      return "inside chunk " + std::to_string(chunks_) + ", " +
             std::to_string(chunk_size_ - left_) + " of its " + std::to_string(chunk_size_) +
             " bytes read";
    case State::kDataEnd:
      return "at the end of chunk " + std::to_string(chunks_);
    case State::kTrailer:
      return "in the trailer after the last chunk";
    case State::kDone:
    case State::kFailed:
      return "";
  }
  return "";
}

}  // namespace lousho::agent
