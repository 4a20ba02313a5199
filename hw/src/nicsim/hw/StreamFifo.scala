package nicsim.hw

import spinal.core._
import spinal.lib._
import nicsim.sim.Layout

/**
 * RTL twin of the kernel's `nicsim.sim.StreamFifo`: a FIFO of layout payloads between two streams,
 * built on SpinalHDL's own StreamFifo with latency 1 (an element pushed on edge n can pop on edge
 * n+1; push.ready is "not full"), which is the timing the Java twin models.
 *
 * @param layout payload layout, defined once in firmware-model
 * @param depth  number of entries
 */
case class StreamFifo(layout: Layout[_], depth: Int) extends Component {
  require(depth >= 2, s"depth $depth: SpinalHDL's latency-1 FIFO needs at least 2 entries")
  val io = new Bundle {
    val push = slave(Stream(new LayoutBundle(layout)))
    val pop = master(Stream(new LayoutBundle(layout)))
    val occupancy = out(UInt(log2Up(depth + 1) bits))
  }
  val fifo = spinal.lib.StreamFifo(new LayoutBundle(layout), depth, latency = 1)
  fifo.io.push << io.push
  io.pop << fifo.io.pop
  io.occupancy := fifo.io.occupancy
}
