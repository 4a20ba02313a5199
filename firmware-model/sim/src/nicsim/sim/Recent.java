package nicsim.sim;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A map that keeps its latest {@code capacity} entries, oldest first: one more put drops the oldest,
 * as a small hardware buffer of lines does.
 */
public final class Recent<K, V> extends LinkedHashMap<K, V> {
    private final int capacity;

    public Recent(int capacity) { this.capacity = capacity; }

    /** Puts {@code value} under {@code key} as the newest entry (one already there moves to the newest place). */
    public void keep(K key, V value) {
        remove(key);
        put(key, value);
    }

    @Override protected boolean removeEldestEntry(Map.Entry<K, V> eldest) { return size() > capacity; }
}
