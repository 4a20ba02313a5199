package nicsim.sim;

import java.util.List;

/** A hardware block with an RTL twin: a name (the RTL component's) and its ports. */
public interface Block extends Clocked {
    String name();

    List<Port> ports();
}
