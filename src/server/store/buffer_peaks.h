// BufferPeaks: INFO clients' client_recent_max_input_buffer and client_recent_max_output_buffer,
// the largest query and reply buffer any client had over the last few seconds. As Redis keeps
// them (ClientsPeakMemInput/Output, sampled by its clientsCron), each loop's housekeeping notes
// every client's buffers before giving back what a burst grew, into a slot per second; the
// figure is the largest of the last kSeconds slots. So a 1 MB request shows for about 8 s after
// it ran, where the buffers' current sizes (what INFO read before) had already shrunk.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace chronocached {

class BufferPeaks {
 public:
  static constexpr std::int64_t kSeconds = 8;
  struct Peaks {
    std::size_t input = 0;
    std::size_t output = 0;
  };

  // One client's buffers as seen at `unix_s` (seconds since the epoch).
  void note(std::int64_t unix_s, std::size_t input, std::size_t output) noexcept {
    Slot& slot = slots_[static_cast<std::size_t>(unix_s % kSeconds)];
    if (slot.second != unix_s) slot = Slot{unix_s, {}};
    slot.peaks.input = std::max(slot.peaks.input, input);
    slot.peaks.output = std::max(slot.peaks.output, output);
  }
  // The largest noted in the kSeconds up to `unix_s`.
  Peaks recent(std::int64_t unix_s) const noexcept {
    Peaks most;
    for (const Slot& slot : slots_) {
      if (slot.second > unix_s || unix_s - slot.second >= kSeconds) continue;
      most.input = std::max(most.input, slot.peaks.input);
      most.output = std::max(most.output, slot.peaks.output);
    }
    return most;
  }

 private:
  struct Slot {
    std::int64_t second = -1;  // none yet
    Peaks peaks;
  };
  std::array<Slot, kSeconds> slots_{};
};

}  // namespace chronocached
