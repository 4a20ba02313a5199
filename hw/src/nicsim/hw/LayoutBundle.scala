package nicsim.hw

import scala.jdk.CollectionConverters._
import spinal.core._
import nicsim.sim.Layout

/**
 * A SpinalHDL bundle built from a [[nicsim.sim.Layout]] that firmware-model owns: one UInt per
 * field, same names, same widths, same order. RTL and Java model therefore share one layout
 * definition, and a port's signals are called `io_<port>_payload_<field>` on both sides. The
 * blocks use the typed subclasses the build generates per layout (`XlateReqPayload`, with a
 * method per field: `nicsim.adapter.LayoutBundles`); `apply(name)` stays for generic code.
 */
class LayoutBundle(val layout: Layout[_]) extends Bundle {
  private val byName: Map[String, UInt] = layout.fields().asScala.map { f =>
    val u = UInt(f.width() bits)
    valCallback(u, f.name())
    f.name() -> u
  }.toMap

  def apply(name: String): UInt =
    byName.getOrElse(name, throw new IllegalArgumentException(s"layout ${layout.name()} has no field '$name'"))

  def fieldNames: Seq[String] = layout.fields().asScala.map(_.name()).toSeq
}
