package dev.relayfarm.kernel.loop;

import java.util.ArrayList;
import java.util.List;

/** Statements run in order. */
public record Seq(List<Stmt> stmts) implements Stmt {
    public Seq {
        stmts = List.copyOf(stmts);
    }

    /** One statement stays itself; nested sequences are flattened. */
    public static Stmt of(List<Stmt> stmts) {
        List<Stmt> flat = new ArrayList<>();
        for (Stmt s : stmts) {
            if (s instanceof Seq q) flat.addAll(q.stmts());
            else flat.add(s);
        }
        return flat.size() == 1 ? flat.getFirst() : new Seq(flat);
    }
}
