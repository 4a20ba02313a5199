package nicsim.hw

import java.io.{OutputStream, PrintStream}
import java.nio.file.Path
import java.util.function.Supplier
import spinal.core._

/** One block's Verilog, written for tools outside the simulation (Yosys: `nicsim hw cost`). */
object VerilogFile {
  /**
   * SpinalHDL's configuration for every Verilog nicsim writes: into `dir`, without the header line naming the
   * repository's commit. That line is written only where `git rev-parse` works, and Yosys names a mutant by its
   * Verilog line numbers: with it, a checkout and an unpacked tree would number the same block's mutants apart.
   */
  def config(dir: String): SpinalConfig = SpinalConfig(targetDirectory = dir, headerWithRepoHash = false)

  /** Writes the block `make` builds into `dir`, SpinalHDL kept quiet; returns its top module's name. */
  def write(make: Supplier[Component], dir: Path): String =
    Console.withOut(new PrintStream(OutputStream.nullOutputStream())) {
      config(dir.toString).generateVerilog(make.get()).toplevelName
    }
}
