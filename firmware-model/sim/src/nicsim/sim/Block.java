package nicsim.sim;

import java.util.List;
import nicsim.wave.VcdWriter;

/** A hardware block with an RTL twin: a name (the RTL component's) and its ports. */
public interface Block extends Clocked {
    String name();

    List<Port> ports();

    /**
     * Traces every port under {@code scope} with the RTL's signal names, so this block's trace and
     * its RTL twin's open side by side (e.g. scope "TOP.DoorbellDecoder").
     */
    default void trace(VcdWriter writer, String scope) {
        for (Port p : ports()) {
            if (p.channel() instanceof Stream<?> s) s.trace(writer, scope);
            else if (p.channel() instanceof Flow<?> f) f.trace(writer, scope);
            else ((Signal) p.channel()).trace(writer, scope);
        }
    }
}
