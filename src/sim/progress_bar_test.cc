// The progress line's text, and that a disabled bar prints nothing.
#include "sim/progress_bar.h"

#include <gtest/gtest.h>

namespace chronocache::sim {
namespace {

TEST(ProgressBar, RendersTheFractionDoneAsABarAndAPercentage) {
  EXPECT_EQ(ProgressBar::render("replaying", 0, 200, 0.0),
            "replaying [..............................]   0% 0.0 s");
  EXPECT_EQ(ProgressBar::render("replaying", 100, 200, 1.25),
            "replaying [###############...............]  50% 1.2 s");
  EXPECT_EQ(ProgressBar::render("x", 300, 200, 2.0),  // clamped
            "x [##############################] 100% 2.0 s");
  EXPECT_EQ(ProgressBar::render("x", 0, 0, 0.0), "x [##############################] 100% 0.0 s");
}

TEST(ProgressBar, DisabledBarWritesNothing) {
  testing::internal::CaptureStderr();
  {
    ProgressBar bar("reading", 10, false);
    bar.update(5);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace chronocache::sim
