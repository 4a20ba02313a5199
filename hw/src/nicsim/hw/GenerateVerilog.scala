package nicsim.hw

import spinal.core._
import nicsim.adapter.DoorbellMsg
import nicsim.profile.Profiles

/** Writes the Verilog of every RTL block into the folder given as the first argument (`./mill hw.verilog`). */
object GenerateVerilog {
  /** Every block with the parameters the adapter uses; cosim and lint read the same list. */
  def blocks: Seq[(String, () => Component)] = {
    val profile = Profiles.load(Profiles.DEFAULT)
    Seq(
      "DoorbellFifo" -> (() => StreamFifo(DoorbellMsg.LAYOUT, 8).setDefinitionName("DoorbellFifo")),
      "DoorbellDecoder" -> (() => DoorbellDecoder(nicsim.adapter.DoorbellDecoder.Config.from(profile))),
      "WqeFetcher" -> (() => WqeFetcher(nicsim.adapter.WqeFetcher.Config.from(profile))),
      "MttWalker" -> (() => MttWalker(nicsim.adapter.MttWalker.Config.from(profile))),
      "CqeWriter" -> (() => CqeWriter(nicsim.adapter.CqeWriter.Config.from(profile))),
      "DmaEngine" -> (() => DmaEngine(nicsim.adapter.DmaEngine.Config.from(profile)))
    )
  }

  def main(args: Array[String]): Unit = {
    val dir = if (args.nonEmpty) args(0) else "gen/verilog"
    for ((name, make) <- blocks) {
      VerilogFile.config(dir).copy(oneFilePerComponent = false).generateVerilog(make())
      println(s"wrote $dir/$name.v")
    }
  }
}
