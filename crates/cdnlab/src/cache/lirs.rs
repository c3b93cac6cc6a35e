//! LIRS (Jiang and Zhang, "LIRS: An efficient low inter-reference recency set replacement
//! policy to improve buffer cache performance", SIGMETRICS 2002), by the paper's three cases,
//! with weights. Objects are LIR (low inter-reference recency: kept) or HIR; the LIR set holds
//! C - H units and resident HIR objects the rest, H = max(1, floor(0.01 C)). The stack S orders
//! objects by recency, with non-resident HIR entries (evicted, still remembered) among them, and
//! is pruned so its bottom is LIR; the queue Q holds the resident HIR objects, and evictions take
//! its oldest.
//!
//! - A hit on a LIR object moves it to the top of S (pruning if it was the bottom).
//! - A hit on a resident HIR object in S makes it LIR (the bottom LIR becomes HIR, to Q); one
//!   not in S enters S's top and moves to Q's newest end.
//! - A miss evicts from Q until the object fits; the object becomes LIR if it was a
//!   non-resident entry of S (again demoting the bottom LIR), else resident HIR. While the LIR
//!   set has room (warm-up), a new object is LIR.
//!
//! Reconstructed where the paper is silent, as libCacheSim does: objects heavier than H are not
//! admitted; S keeps at most 2 C units, dropping the non-resident entries
//! that became non-resident first; with weights, demotions repeat until the LIR set fits, and a
//! miss with Q empty demotes the bottom LIR to make an eviction possible. libCacheSim's `LIRS`
//! departs from the paper in places (a hit on a resident HIR object outside S demotes a LIR
//! object there), so the two differ; docs/cache.md gives by how much.

use super::ghost::Ghost;
use super::index::IdIndex;
use super::slots::{List, NIL, Slots};
use super::{Cache, Capacity, replay_dyn};

/// An entry of the stack S.
#[derive(Debug, Clone, Copy)]
struct Node {
    key: u64,
    w: u32,
    prev: u32,
    next: u32,
    /// The resident object's slot, or NIL for a non-resident HIR entry.
    slot: u32,
}

/// The stack S: a doubly linked list over its own arena, head the top (most recent).
#[derive(Debug, Clone, Default)]
struct Stack {
    nodes: Vec<Node>,
    free: u32,
    head: u32,
    tail: u32,
    used: u64,
}

impl Stack {
    fn new() -> Self {
        Stack {
            nodes: Vec::new(),
            free: NIL,
            head: NIL,
            tail: NIL,
            used: 0,
        }
    }

    fn push_top(&mut self, key: u64, w: u32, slot: u32) -> u32 {
        let node = Node {
            key,
            w,
            prev: NIL,
            next: self.head,
            slot,
        };
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        self.link_top(n);
        self.used += u64::from(w);
        n
    }

    fn link_top(&mut self, n: u32) {
        self.nodes[n as usize].prev = NIL;
        self.nodes[n as usize].next = self.head;
        if self.head != NIL {
            self.nodes[self.head as usize].prev = n;
        } else {
            self.tail = n;
        }
        self.head = n;
    }

    fn unlink(&mut self, n: u32) {
        let Node { prev, next, .. } = self.nodes[n as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    fn raise(&mut self, n: u32) {
        if self.head != n {
            self.unlink(n);
            self.link_top(n);
        }
    }

    fn remove(&mut self, n: u32) {
        self.unlink(n);
        self.used -= u64::from(self.nodes[n as usize].w);
        self.nodes[n as usize].next = self.free;
        self.free = n;
    }
}

/// LIRS.
#[derive(Debug, Clone)]
pub struct Lirs {
    /// Resident objects; their list links form Q (resident HIR, newest at the head).
    slots: Slots,
    q: List,
    /// Per slot: whether LIR, and its node in S (NIL if not in S).
    lir: Vec<bool>,
    snode: Vec<u32>,
    stack: Stack,
    /// Non-resident entries of S: by id, and in the order they became non-resident.
    nonresident: IdIndex,
    nr_order: Ghost,
    lir_used: u64,
    lir_cap: u64,
    hir_cap: u64,
    cap: Capacity,
}

impl Lirs {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let hir_cap = ((cap.amount as f64 * 0.01) as u64).max(1);
        let n = cap.expected_objects();
        Lirs {
            slots: Slots::for_capacity(cap),
            q: List::default(),
            lir: Vec::with_capacity(n),
            snode: Vec::with_capacity(n),
            stack: Stack::new(),
            nonresident: IdIndex::with_capacity(16),
            nr_order: Ghost::new(u64::MAX, 16),
            lir_used: 0,
            lir_cap: cap.amount.saturating_sub(hir_cap),
            hir_cap,
            cap,
        }
    }

    fn resident_used(&self) -> u64 {
        self.lir_used + self.q.used
    }

    /// Removes S's bottom entries until the bottom is LIR.
    fn prune(&mut self) {
        while self.stack.tail != NIL {
            let n = self.stack.tail;
            let node = self.stack.nodes[n as usize];
            if node.slot != NIL {
                if self.lir[node.slot as usize] {
                    return;
                }
                self.snode[node.slot as usize] = NIL;
            } else {
                let nodes = &self.stack.nodes;
                self.nonresident.remove(node.key, |m| nodes[m as usize].key);
                self.nr_order.take(node.key);
            }
            self.stack.remove(n);
        }
    }

    /// The bottom LIR object becomes resident HIR at Q's newest end; S is pruned.
    fn demote_bottom(&mut self) {
        // S's bottom is LIR whenever S holds a LIR object, except after HIR entries were pushed
        // on a stack without one; pruning first restores it.
        self.prune();
        let n = self.stack.tail;
        let s = self.stack.nodes[n as usize].slot;
        debug_assert!(s != NIL && self.lir[s as usize]);
        self.stack.remove(n);
        self.lir[s as usize] = false;
        self.snode[s as usize] = NIL;
        self.lir_used -= u64::from(self.slots.weight(s));
        self.slots.push_front(&mut self.q, s);
        self.prune();
    }

    /// Evicts Q's oldest; its S entry, if any, stays as non-resident.
    fn evict(&mut self) {
        if self.q.len == 0 {
            self.demote_bottom();
        }
        let t = self.q.tail;
        self.slots.unlink(&mut self.q, t);
        let n = self.snode[t as usize];
        if n != NIL {
            let key = self.slots.key(t);
            self.stack.nodes[n as usize].slot = NIL;
            self.nonresident.insert(key, n);
            self.nr_order.push(key, 1);
        }
        self.slots.release(t);
    }

    /// Makes resident slot `s` (at the top of S) LIR, demoting until the LIR set fits.
    fn make_lir(&mut self, s: u32) {
        self.lir[s as usize] = true;
        self.lir_used += u64::from(self.slots.weight(s));
        while self.lir_used > self.lir_cap {
            self.demote_bottom();
        }
    }

    /// Keeps S within 2 C units by forgetting the oldest non-resident entries.
    fn bound_stack(&mut self) {
        while self.stack.used > 2 * self.cap.amount {
            let Some(key) = self.nr_order.pop_oldest() else {
                return;
            };
            let nodes = &self.stack.nodes;
            let n = self
                .nonresident
                .remove(key, |m| nodes[m as usize].key)
                .expect("non-resident entries are indexed");
            self.stack.remove(n);
            self.prune();
        }
    }

    fn alloc(&mut self, id: u64, w: u32) -> u32 {
        let s = self.slots.alloc(id, w);
        if s as usize == self.lir.len() {
            self.lir.push(false);
            self.snode.push(NIL);
        }
        self.lir[s as usize] = false;
        self.snode[s as usize] = NIL;
        s
    }
}

impl Cache for Lirs {
    fn name(&self) -> &'static str {
        "lirs"
    }
    fn capacity(&self) -> Capacity {
        self.cap
    }
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            let n = self.snode[s as usize];
            if self.lir[s as usize] {
                let bottom = self.stack.tail == n;
                self.stack.raise(n);
                if bottom {
                    self.prune();
                }
            } else if n != NIL {
                self.stack.raise(n);
                self.slots.unlink(&mut self.q, s);
                self.make_lir(s);
            } else {
                let w = self.slots.weight(s);
                self.snode[s as usize] = self.stack.push_top(id, w, s);
                self.slots.unlink(&mut self.q, s);
                self.slots.push_front(&mut self.q, s);
                self.bound_stack();
            }
            return true;
        }
        let w = self.cap.weight(size);
        if u64::from(w) > self.hir_cap {
            return false;
        }
        while self.resident_used() + u64::from(w) > self.cap.amount {
            self.evict();
        }
        let nodes = &self.stack.nodes;
        let old = self.nonresident.remove(id, |m| nodes[m as usize].key);
        let s = self.alloc(id, w);
        match old {
            Some(n) => {
                self.nr_order.take(id);
                self.stack.nodes[n as usize].slot = s;
                self.stack.used -= u64::from(self.stack.nodes[n as usize].w);
                self.stack.nodes[n as usize].w = w;
                self.stack.used += u64::from(w);
                self.stack.raise(n);
                self.snode[s as usize] = n;
                self.make_lir(s);
            }
            None if self.lir_used + u64::from(w) <= self.lir_cap => {
                self.snode[s as usize] = self.stack.push_top(id, w, s);
                self.make_lir(s);
            }
            None => {
                self.snode[s as usize] = self.stack.push_top(id, w, s);
                self.slots.push_front(&mut self.q, s);
            }
        }
        self.bound_stack();
        false
    }
    fn prefetch(&self, id: u64) {
        self.slots.prefetch(id);
    }
    fn contains(&self, id: u64) -> bool {
        self.slots.find(id).is_some()
    }
    fn len(&self) -> usize {
        self.slots.len()
    }
    fn used(&self) -> u64 {
        self.resident_used()
    }
    fn heap_bytes(&self) -> usize {
        self.slots.heap_bytes()
            + self.lir.capacity()
            + self.snode.capacity() * 4
            + self.stack.nodes.capacity() * std::mem::size_of::<Node>()
            + self.nonresident.heap_bytes()
            + self.nr_order.heap_bytes()
    }
    replay_dyn!();
}
