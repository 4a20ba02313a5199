package nicsim.hw

import spinal.core._
import spinal.lib._

/**
 * A two-entry output queue driving a stream from registers: valid is "not empty", the payload is
 * the head; an edge pops the head when the stream fires, then `push` appends behind what remains.
 * With the producer asking "count < 2" (a registered ready) it sustains one transfer per cycle.
 * The Java twins model it as an ArrayDeque of at most two entries.
 */
class OutQueue[T <: Data](gen: => T, port: Stream[T]) extends Area {
  val q = Vec.fill(2)(Reg(gen))
  val count = Reg(UInt(2 bits)) init (0)
  port.valid := count =/= 0
  port.payload := q(0)
  val popped = port.fire
  val afterPop = count - popped.asUInt.resize(2)
  when(popped) { q(0) := q(1) }
  val pushed = Bool()
  pushed := False
  def push(v: T): Unit = { pushed := True; q(afterPop.resize(1)) := v }
  count := afterPop + pushed.asUInt.resize(2)
}
