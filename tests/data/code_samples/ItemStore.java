package com.example.store;

import java.util.List;

/** An in-memory store of items. */
public class ItemStore implements Store {
    private final List<String> items;

    /** Creates an empty store. */
    public ItemStore() { this.items = new java.util.ArrayList<>(); }

    /**
     * Adds an item.
     * @param item the item
     */
    @Override
    public void add(String item) {
        items.add(item);
    }

    static class Entry { int n; }
}

interface Store { void add(String item); }
enum Level { LOW, HIGH }
