package nicsim.hw

import scala.jdk.CollectionConverters._
import spinal.core.sim._
import nicsim.sim.Layout

/**
 * Moves Java payload records in and out of a [[LayoutBundle]] in simulation, field by field through the shared layout.
 */
object LayoutSim {
  def write[T](b: LayoutBundle, layout: Layout[T], value: T): Unit = {
    val v = layout.values(value)
    for ((f, i) <- layout.fields().asScala.zipWithIndex) b(f.name()) #= BigInt(java.lang.Long.toUnsignedString(v(i)))
  }

  def read[T](b: LayoutBundle, layout: Layout[T]): T =
    layout.make(layout.fields().asScala.map(f => b(f.name()).toBigInt.longValue).toArray)
}
