//! LIRS (Jiang and Zhang, "LIRS: An efficient low inter-reference recency set replacement
//! policy to improve buffer cache performance", SIGMETRICS 2002) in two variants: [`Lirs`]
//! (`lirs`) is libCacheSim's `LIRS.c` step by step (see its docs), and [`LirsPaper`]
//! (`lirs-paper`) follows the paper's three cases, with weights, as below.
//!
//! The paper's LIRS: objects are LIR (low inter-reference recency: kept) or HIR; the LIR set holds
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
use super::slots::{List, NIL, Slots, put};
use super::{Cache, Capacity, Occupancy, replay_dyn, slot_lookup};
use crate::idmap::IdIndex;

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

/// LIRS by the paper's cases (`lirs-paper`).
#[derive(Debug, Clone)]
pub struct LirsPaper {
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

impl LirsPaper {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let hir_cap = ((cap.amount as f64 * 0.01) as u64).max(1);
        let n = cap.expected_objects();
        LirsPaper {
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
        put(&mut self.lir, s, false);
        put(&mut self.snode, s, NIL);
        s
    }
}

impl Cache for LirsPaper {
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
    slot_lookup!();
    fn occupancy(&self) -> Occupancy {
        Occupancy {
            objects: self.slots.len(),
            used: self.resident_used(),
            heap_bytes: self.slots.heap_bytes()
                + self.lir.capacity()
                + self.snode.capacity() * 4
                + self.stack.nodes.capacity() * std::mem::size_of::<Node>()
                + self.nonresident.heap_bytes()
                + self.nr_order.heap_bytes(),
        }
    }
    replay_dyn!();
}

/// libCacheSim's list of non-resident entries (an LRU cache used as a FIFO): it may hold an id
/// more than once (an insertion does not look for an existing entry), a removal by id takes the
/// newest entry (its hash table chains put new entries first), and the oldest leave first.
#[derive(Debug, Clone, Default)]
struct NonResident {
    ring: std::collections::VecDeque<(u64, bool)>,
    /// Absolute position of `ring[0]`.
    base: u64,
    /// Each id's live positions, oldest first.
    pos: crate::idmap::IdMap<smallvec::SmallVec<[u64; 1]>>,
}

impl NonResident {
    fn push(&mut self, id: u64) {
        let p = self.base + self.ring.len() as u64;
        self.pos.entry(id).or_default().push(p);
        self.ring.push_back((id, true));
    }

    /// Removes `id`'s newest entry; false if it has none.
    fn remove(&mut self, id: u64) -> bool {
        let Some(v) = self.pos.get_mut(&id) else {
            return false;
        };
        let p = v.pop().expect("ids with no entry are dropped");
        if v.is_empty() {
            self.pos.remove(&id);
        }
        self.ring[(p - self.base) as usize].1 = false;
        true
    }

    /// Removes the oldest entry and returns its id.
    fn pop_oldest(&mut self) -> Option<u64> {
        while let Some((id, live)) = self.ring.pop_front() {
            self.base += 1;
            if live {
                let v = self.pos.get_mut(&id).expect("live entries are indexed");
                v.remove(0);
                if v.is_empty() {
                    self.pos.remove(&id);
                }
                return Some(id);
            }
        }
        None
    }

    fn heap_bytes(&self) -> usize {
        self.ring.capacity() * 16 + self.pos.capacity() * 32
    }
}

/// LIRS as libCacheSim's `LIRS.c` (PyPI libcachesim 0.3.5) runs it, reproduced so the two
/// agree miss for miss. Its structure differs from the paper's: the stack S, the queue Q of
/// resident HIR objects and the list of non-resident entries are three LRU lists, each with its
/// own copy of an object's state (LIR or HIR, resident or not), and every request moves the
/// object's entry to the head of S and of Q, wherever it is. Its rules, where they depart from
/// the paper's:
///
/// - a hit on a resident HIR object that is in Q but not in S demotes LIR objects until the
///   object's size would fit the LIR set, then enters S as resident HIR;
/// - a miss on a non-resident entry of S demotes LIR objects until it fits the LIR set, then
///   evicts (resident HIR objects while Q is at its share, then one more LIR demotion) until it
///   fits the cache, and becomes LIR;
/// - a new object becomes LIR while the LIR set has room, else resident HIR (in S and Q);
/// - a demoted LIR object heavier than Q's share (H) leaves the cache;
/// - pruning stops at S's head, and S is cut back to 2 C units (oldest non-resident entries
///   first) after every request.
///
/// Counters are kept as libCacheSim keeps them (signed, adjusted step by step), and where its
/// code would crash on an empty list (only with objects heavier than the shares) this one stops.
/// As in libCacheSim, a stale "resident" copy in S still hits, so the cache can answer for a few
/// objects more than its capacity (docs/cache.md gives how many).
#[derive(Debug, Clone)]
pub struct Lirs {
    s: Slots,
    s_list: List,
    s_lir: Vec<bool>,
    s_res: Vec<bool>,
    q: Slots,
    q_list: List,
    /// Q entries are HIR; whether resident.
    q_res: Vec<bool>,
    /// Non-resident entries, in the order they became so.
    nh: NonResident,
    /// LIR and resident HIR weights: unsigned and wrapping, as libCacheSim's `uint64_t`s.
    lirs: u64,
    hirs: u64,
    occupied: i64,
    lirs_limit: u64,
    hirs_limit: u64,
    evicted: Option<Vec<u64>>,
    cap: Capacity,
}

impl Lirs {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        // MAX(1, (uint64_t)(0.01 * cache_size)), as in LIRS_init.
        let hirs_limit = ((0.01 * cap.amount as f64) as u64).max(1);
        let n = cap.expected_objects();
        Lirs {
            s: Slots::for_capacity(cap),
            s_list: List::default(),
            s_lir: Vec::with_capacity(n),
            s_res: Vec::with_capacity(n),
            q: Slots::for_capacity(cap),
            q_list: List::default(),
            q_res: Vec::with_capacity(n / 8),
            nh: NonResident::default(),
            lirs: 0,
            hirs: 0,
            occupied: 0,
            lirs_limit: cap.amount.wrapping_sub(hirs_limit),
            hirs_limit,
            evicted: None,
            cap,
        }
    }

    fn w(slots: &Slots, s: u32) -> u64 {
        u64::from(slots.weight(s))
    }

    fn s_insert(&mut self, id: u64, w: u32, lir: bool, res: bool) -> u32 {
        let s = self.s.alloc(id, w);
        put(&mut self.s_lir, s, lir);
        put(&mut self.s_res, s, res);
        self.s.push_front(&mut self.s_list, s);
        s
    }

    fn q_insert(&mut self, id: u64, w: u32) {
        if let Some(old) = self.q.find(id) {
            // Only in states libCacheSim's own checks rule out; keep one entry.
            self.q.unlink(&mut self.q_list, old);
            self.q.release(old);
        }
        let s = self.q.alloc(id, w);
        put(&mut self.q_res, s, true);
        self.q.push_front(&mut self.q_list, s);
    }

    fn s_remove(&mut self, s: u32) {
        self.s.unlink(&mut self.s_list, s);
        self.s.release(s);
    }

    /// Logs `id` as evicted if no entry holds it as resident any more.
    fn log_if_gone(&mut self, id: u64) {
        if self.evicted.is_some()
            && !self.contains(id)
            && let Some(e) = &mut self.evicted
        {
            e.push(id);
        }
    }

    fn contains_in_s(&self, id: u64) -> bool {
        self.s
            .find(id)
            .is_some_and(|s| self.s_lir[s as usize] || self.s_res[s as usize])
    }

    /// `LIRS_prune`: drops S's tail entries up to the first LIR one, never the head.
    fn prune(&mut self) {
        let mut t = self.s_list.tail;
        while t != NIL && t != self.s_list.head {
            if self.s_lir[t as usize] {
                break;
            }
            let (id, res) = (self.s.key(t), self.s_res[t as usize]);
            if !res {
                self.nh.remove(id);
            }
            self.s_remove(t);
            if res {
                self.log_if_gone(id);
            }
            t = self.s_list.tail;
        }
    }

    /// `evictHIR`: Q's tail leaves the cache; its S entry, if any, becomes non-resident.
    fn evict_hir(&mut self) {
        let t = self.q_list.tail;
        if t == NIL {
            return;
        }
        let (id, w) = (self.q.key(t), Self::w(&self.q, t));
        self.hirs = self.hirs.wrapping_sub(w);
        self.q.unlink(&mut self.q_list, t);
        self.q.release(t);
        if let Some(s) = self.s.find(id) {
            self.s_res[s as usize] = false;
            self.nh.push(id);
        }
        self.occupied -= w as i64;
        self.log_if_gone(id);
    }

    /// `evictLIR`: S's tail is demoted to Q (or leaves, if heavier than Q's share); prune.
    fn evict_lir(&mut self) {
        let t = self.s_list.tail;
        if t == NIL {
            return;
        }
        let (id, w) = (self.s.key(t), self.s.weight(t));
        self.lirs = self.lirs.wrapping_sub(u64::from(w));
        self.s_remove(t);
        self.occupied -= i64::from(w);
        if u64::from(w) <= self.hirs_limit {
            while self.hirs.wrapping_add(u64::from(w)) > self.hirs_limit && self.q_list.tail != NIL
            {
                self.evict_hir();
            }
            self.q_insert(id, w);
            self.hirs = self.hirs.wrapping_add(u64::from(w));
            self.occupied += i64::from(w);
        } else {
            self.log_if_gone(id);
        }
        self.prune();
    }

    /// Demotes LIR objects until `w` more fits the LIR set (stops if S empties).
    fn make_lir_room(&mut self, w: u64) {
        while self.lirs.wrapping_add(w) > self.lirs_limit && self.s_list.tail != NIL {
            self.evict_lir();
        }
    }

    /// `limitStack`: S back within 2 C units, forgetting the oldest non-resident entries.
    /// libCacheSim removes the S entry of the id at the non-resident list's tail without
    /// looking at it; the list can be stale (the id became resident again since), so the entry
    /// removed may be a resident one and the object leave the cache here, with no eviction of
    /// its own in libCacheSim. Reproduced, and logged like any departure.
    fn limit_stack(&mut self) {
        while self.s_list.used > 2 * self.cap.amount {
            let Some(id) = self.nh.pop_oldest() else {
                return;
            };
            if let Some(s) = self.s.find(id) {
                let resident = self.s_lir[s as usize] || self.s_res[s as usize];
                self.s_remove(s);
                if resident {
                    self.log_if_gone(id);
                }
            }
        }
    }

    /// `cache_get_base` with LIRS' find, can_insert, evict and insert.
    fn get(&mut self, id: u64, size: u32) -> bool {
        let obj_s = self.s.find(id);
        if let Some(s) = obj_s {
            self.s.unlink(&mut self.s_list, s);
            self.s.push_front(&mut self.s_list, s);
        }
        let obj_q = self.q.find(id);
        if let Some(q) = obj_q {
            self.q.unlink(&mut self.q_list, q);
            self.q.push_front(&mut self.q_list, q);
        }
        match (obj_s, obj_q) {
            (Some(s), _) if self.s_lir[s as usize] => {
                self.prune();
                return true;
            }
            (Some(s), q) if self.s_res[s as usize] => {
                // hit_RD_HIRinS
                if let Some(q) = q {
                    let qw = Self::w(&self.q, q);
                    self.hirs = self.hirs.wrapping_sub(qw);
                    self.q.unlink(&mut self.q_list, q);
                    self.q.release(q);
                    self.occupied -= qw as i64;
                }
                let sw = Self::w(&self.s, s);
                self.make_lir_room(sw);
                // The entry may have been demoted away only if it was S's last one.
                if let Some(s) = self.s.find(id) {
                    self.s_lir[s as usize] = true;
                }
                self.lirs = self.lirs.wrapping_add(sw);
                self.occupied += sw as i64;
                return true;
            }
            (None, Some(q)) if self.q_res[q as usize] => {
                // hit_RD_HIRinQ
                let (qw, wu) = (Self::w(&self.q, q), self.q.weight(q));
                let logged = self.evicted.as_ref().map_or(0, Vec::len);
                // libCacheSim re-reads the object's size through its Q entry's pointer, which
                // the demotions below can free (evicting the entry from Q); glibc then hands
                // that memory to the next Q entry, the demoted object, whose size the loop reads
                // from then on. Reproduced, so results match with byte sizes too.
                let mut cur = qw;
                while self.lirs.wrapping_add(cur) > self.lirs_limit && self.s_list.tail != NIL {
                    self.evict_lir();
                    if self.q.find(id).is_none() && self.q_list.head != NIL {
                        cur = Self::w(&self.q, self.q_list.head);
                    }
                }
                self.s_insert(id, wu, false, true);
                // The demotions can evict this object's own Q entry; it is resident again (and
                // a hit), so it never left as far as a caller holding objects can tell.
                if let Some(e) = &mut self.evicted {
                    let mut i = logged;
                    while i < e.len() {
                        if e[i] == id {
                            e.remove(i);
                        } else {
                            i += 1;
                        }
                    }
                }
                return true;
            }
            _ => {}
        }
        // A miss.
        let Some(w) = self.cap.admissible(size) else {
            return false;
        };
        let wi = u64::from(w);
        // LIRS_can_insert
        let nonresident = obj_s.is_some();
        if nonresident {
            let sw = obj_s.map_or(0, |s| Self::w(&self.s, s));
            self.make_lir_room(sw);
            self.nh.remove(id);
        } else if obj_q.is_none() {
            if wi > self.lirs_limit || wi > self.hirs_limit {
                return false;
            }
            if self.lirs.wrapping_add(wi) > self.lirs_limit
                && self.hirs.wrapping_add(wi) > self.hirs_limit
            {
                while self.hirs.wrapping_add(wi) > self.hirs_limit && self.q_list.tail != NIL {
                    self.evict_hir();
                }
            }
        } else {
            return false;
        }
        // The eviction loop, with LIRS_evict; it stops if a round changes nothing.
        while self.occupied + wi as i64 > self.cap.amount as i64 {
            let before = (self.occupied, self.lirs, self.hirs);
            let obj_s = self.s.find(id);
            let nonres = obj_s.is_some_and(|s| !self.s_lir[s as usize] && !self.s_res[s as usize]);
            if nonres {
                while self.hirs >= self.hirs_limit && self.q_list.tail != NIL {
                    self.evict_hir();
                }
                self.evict_lir();
            } else if obj_s.is_none()
                && self.q.find(id).is_none()
                && self.lirs.wrapping_add(wi) > self.lirs_limit
                && self.hirs.wrapping_add(wi) > self.hirs_limit
            {
                self.evict_hir();
            }
            if before == (self.occupied, self.lirs, self.hirs) {
                break;
            }
        }
        // LIRS_insert
        match self.s.find(id) {
            Some(s) if !self.s_lir[s as usize] && !self.s_res[s as usize] => {
                self.s_lir[s as usize] = true;
                self.s_res[s as usize] = true;
                let sw = Self::w(&self.s, s);
                self.lirs = self.lirs.wrapping_add(sw);
                self.occupied += sw as i64;
            }
            Some(_) => {}
            None if self.q.find(id).is_none() => {
                if self.lirs.wrapping_add(wi) <= self.lirs_limit {
                    self.s_insert(id, w, true, true);
                    self.lirs = self.lirs.wrapping_add(wi);
                } else {
                    self.s_insert(id, w, false, true);
                    self.q_insert(id, w);
                    self.hirs = self.hirs.wrapping_add(wi);
                }
                self.occupied += wi as i64;
            }
            None => {}
        }
        false
    }
}

impl Lirs {
    /// The objects some entry holds as resident, counted by walking S and Q (libCacheSim's own
    /// count can drift in rare states); O(objects).
    fn resident_objects(&self) -> usize {
        let walk = |slots: &Slots, list: &List| {
            let mut v = Vec::with_capacity(list.len);
            let mut t = list.tail;
            while t != NIL {
                v.push(t);
                t = slots.prev(t);
            }
            v
        };
        let in_s = walk(&self.s, &self.s_list)
            .into_iter()
            .filter(|&s| self.s_lir[s as usize] || self.s_res[s as usize])
            .count();
        let q_only = walk(&self.q, &self.q_list)
            .into_iter()
            .filter(|&q| self.q_res[q as usize] && !self.contains_in_s(self.q.key(q)))
            .count();
        in_s + q_only
    }
}

impl Cache for Lirs {
    fn access(&mut self, id: u64, size: u32) -> bool {
        let hit = self.get(id, size);
        self.limit_stack();
        hit
    }
    fn prefetch(&self, id: u64) {
        self.s.prefetch(id);
    }
    fn contains(&self, id: u64) -> bool {
        self.contains_in_s(id) || self.q.find(id).is_some_and(|q| self.q_res[q as usize])
    }
    fn occupancy(&self) -> Occupancy {
        Occupancy {
            objects: self.resident_objects(),
            used: self.occupied.max(0) as u64,
            heap_bytes: self.s.heap_bytes()
                + self.q.heap_bytes()
                + self.s_lir.capacity()
                + self.s_res.capacity()
                + self.q_res.capacity()
                + self.nh.heap_bytes(),
        }
    }
    fn replay_dyn(&mut self, reqs: &[crate::workload::Request]) -> super::Tally {
        Cache::replay(self, reqs)
    }
    fn log_evictions(&mut self) {
        self.evicted.get_or_insert_with(Vec::new);
    }
    /// Objects still resident are not reported: in rare states of tiny caches (libCacheSim's
    /// rules, reproduced) an entry is evicted while another entry keeps the object resident.
    fn drain_evictions(&mut self, out: &mut Vec<u64>) {
        if let Some(mut e) = self.evicted.take() {
            out.extend(e.drain(..).filter(|&x| !self.contains(x)));
            self.evicted = Some(e);
        }
    }
}
