// Which gate slot a session takes (session_slots.hpp), without libtorch: the
// first counted slot no open op began through, and the tagged slot once ops
// left open hold every counted one. Ops are opened and closed through the
// same per-thread marks the gate counts them in.
#include "session_slots.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace regiontrace::torch_profiler {
namespace {

// An op begun through `slot` on the calling thread, as the gate counts it.
void open_op(int slot) {
  CallUnderWay call([] { return true; });
  call.op_opened(slot);
}
void close_op(int slot) {
  CallUnderWay call([] { return true; });
  call.op_closed(slot);
}

TEST(SessionSlots, ASessionTakesTheFirstSlotNoOpenOpBeganThrough) {
  prepare_calls_under_way();
  EXPECT_EQ(SessionSlots::free_slot(), 0);
  open_op(0);
  EXPECT_EQ(SessionSlots::free_slot(), 1);
  // Open on another thread counts as open: the op may end on it later.
  std::thread([] { open_op(1); }).join();
  EXPECT_EQ(SessionSlots::free_slot(), 2);
  close_op(0);
  EXPECT_EQ(SessionSlots::free_slot(), 0);
  std::thread([] { close_op(1); }).join();
  EXPECT_EQ(SessionSlots::free_slot(), 0);
}

// Scopes left open across every counted slot's session: the next session
// tells its ops by RecordFunction handle instead.
TEST(SessionSlots, WithEveryCountedSlotHeldTheTaggedSlotIsTaken) {
  prepare_calls_under_way();
  for (int slot = 0; slot < kCountedSlots; ++slot) open_op(slot);
  EXPECT_EQ(SessionSlots::free_slot(), kTaggedSlot);
  close_op(kCountedSlots - 1);
  EXPECT_EQ(SessionSlots::free_slot(), kCountedSlots - 1);
  for (int slot = 0; slot < kCountedSlots - 1; ++slot) close_op(slot);
  EXPECT_EQ(SessionSlots::free_slot(), 0);
}

TEST(SessionSlots, TheLiveSessionIsNamedBySlotAndTheTaggedOneByItsFirstHandle) {
  SessionSlots slots;
  EXPECT_EQ(slots.live_slot(), -1);
  slots.name_live(2, 99);
  EXPECT_EQ(slots.live_slot(), 2);
  EXPECT_EQ(slots.first_handle(), 0u) << "a counted slot needs no handle";
  slots.name_live(kTaggedSlot, 1234);
  EXPECT_EQ(slots.live_slot(), kTaggedSlot);
  EXPECT_EQ(slots.first_handle(), 1234u);
}

}  // namespace
}  // namespace regiontrace::torch_profiler
