package nicsim.adapter;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import nicsim.sim.Layout;
import org.junit.jupiter.api.Test;

class LayoutBundlesTest {
    /** Every layout a block port carries gets a payload class with one method per field, in the layout's order. */
    @Test
    void everyPortLayoutGetsATypedBundleWithEachField() throws Exception {
        String src = LayoutBundles.source();
        int layouts = 0;
        for (String owner : LayoutBundles.OWNERS)
            for (Field f : Class.forName(owner).getFields()) {
                if (!Modifier.isStatic(f.getModifiers()) || f.getType() != Layout.class) continue;
                Layout<?> l = (Layout<?>) f.get(null);
                String bundle = "class " + l.name() + "Payload extends LayoutBundle(" + owner + "." + f.getName() + ")";
                int at = src.indexOf(bundle);
                assertTrue(at >= 0, l.name() + " has no bundle class");
                for (Layout.Field<?> x : l.fields()) {
                    String def = "def " + LayoutBundles.identifier(x.name()) + ": UInt = this(\"" + x.name() + "\")";
                    int next = src.indexOf(def, at);
                    assertTrue(next > at, l.name() + "." + x.name() + " missing or out of order");
                    at = next;
                }
                layouts++;
            }
        assertTrue(layouts >= 20, "the blocks' ports carry at least 20 layouts, found " + layouts);
    }
}
