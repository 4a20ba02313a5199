package nicsim.hw

import spinal.core._
import nicsim.adapter.DoorbellMsg

/** Writes the Verilog of every RTL block into the folder given as the first argument (`./mill hw.verilog`). */
object GenerateVerilog {
  /** Every block with the parameters the adapter uses; cosim and lint read the same list. */
  def blocks: Seq[(String, () => Component)] = Seq(
    "DoorbellFifo" -> (() => StreamFifo(DoorbellMsg.LAYOUT, 8).setDefinitionName("DoorbellFifo"))
  )

  def main(args: Array[String]): Unit = {
    val dir = if (args.nonEmpty) args(0) else "gen/verilog"
    for ((name, make) <- blocks) {
      SpinalConfig(targetDirectory = dir, oneFilePerComponent = false).generateVerilog(make())
      println(s"wrote $dir/$name.v")
    }
  }
}
