//! Naive models of the two policies whose libCacheSim code and paper differ step by step:
//! S3-FIFO (the paper's Algorithm 1, and `S3FIFO.c`) and LIRS (the paper's three cases, and
//! `LIRS.c`). Same style as [`super::naive`]: vectors and linear scans.

use super::naive::Model;
use crate::cache::s3fifo;
use std::collections::VecDeque;

/// S3-FIFO from the paper's Algorithm 1, with queues of (id, w, freq), newest at the front.
pub(super) struct NaiveS3 {
    s: VecDeque<(u64, u32, u8)>,
    m: VecDeque<(u64, u32, u8)>,
    g: VecDeque<(u64, u32)>,
    cap: u64,
    s_cap: u64,
    m_cap: u64,
}
pub(super) fn used3(q: &VecDeque<(u64, u32, u8)>) -> u64 {
    q.iter().map(|e| u64::from(e.1)).sum()
}
impl NaiveS3 {
    pub(super) fn new(cap: u64) -> Self {
        let s_cap = ((cap as f64 * s3fifo::SMALL_SHARE) as u64).max(1);
        NaiveS3 {
            s: VecDeque::new(),
            m: VecDeque::new(),
            g: VecDeque::new(),
            cap,
            s_cap,
            m_cap: cap.saturating_sub(s_cap).max(1),
        }
    }
    fn evict_m(&mut self) {
        while let Some(mut t) = self.m.pop_back() {
            if t.2 > 0 {
                t.2 -= 1;
                self.m.push_front(t);
            } else {
                return;
            }
        }
    }
    fn evict_s(&mut self) {
        while let Some(t) = self.s.pop_back() {
            if t.2 >= s3fifo::MOVE_TO_MAIN {
                self.m.push_front(t);
                if used3(&self.m) > self.m_cap {
                    self.evict_m();
                }
            } else {
                self.g.push_front((t.0, t.1));
                while self.g.iter().map(|e| u64::from(e.1)).sum::<u64>() > self.m_cap {
                    self.g.pop_back();
                }
                return;
            }
        }
    }
}
impl Model for NaiveS3 {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(e) = self
            .s
            .iter_mut()
            .chain(self.m.iter_mut())
            .find(|e| e.0 == id)
        {
            e.2 = (e.2 + 1).min(3);
            return true;
        }
        if u64::from(w) > self.cap {
            return false;
        }
        let ghost = self
            .g
            .iter()
            .position(|e| e.0 == id)
            .map(|i| self.g.remove(i));
        while used3(&self.s) + used3(&self.m) + u64::from(w) > self.cap {
            if used3(&self.s) >= self.s_cap || self.m.is_empty() {
                self.evict_s();
            } else {
                self.evict_m();
            }
        }
        if ghost.is_some() {
            self.m.push_front((id, w, 0));
        } else {
            self.s.push_front((id, w, 0));
        }
        false
    }
}

/// S3-FIFO as libCacheSim's `S3FIFO.c` runs it, step by step: queues of (id, w, freq), newest
/// at the front; S of floor(0.1 C), M of the rest, a ghost FIFO of floor(0.9 C).
pub(super) struct NaiveS3Lcs {
    s: VecDeque<(u64, u32, u8)>,
    m: VecDeque<(u64, u32, u8)>,
    g: VecDeque<(u64, u32)>,
    cap: u64,
    s_cap: u64,
    m_cap: u64,
    g_cap: u64,
    has_evicted: bool,
}
impl NaiveS3Lcs {
    pub(super) fn new(cap: u64) -> Self {
        let s_cap = (cap as f64 * 0.1) as u64;
        NaiveS3Lcs {
            s: VecDeque::new(),
            m: VecDeque::new(),
            g: VecDeque::new(),
            cap,
            s_cap,
            m_cap: cap - s_cap,
            g_cap: (cap as f64 * 0.9) as u64,
            has_evicted: false,
        }
    }
    fn ghost_get(&mut self, id: u64, w: u32) {
        if self.g.iter().any(|e| e.0 == id) || u64::from(w) > self.g_cap {
            return;
        }
        while self.g.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.g_cap {
            self.g.pop_back();
        }
        self.g.push_front((id, w));
    }
    fn evict(&mut self) {
        self.has_evicted = true;
        if used3(&self.m) > self.m_cap || self.s.is_empty() {
            // S3FIFO_evict_main
            while let Some(t) = self.m.pop_back() {
                if t.2 >= 1 {
                    self.m.push_front((t.0, t.1, t.2.min(3) - 1));
                } else {
                    return;
                }
            }
        } else {
            // S3FIFO_evict_fifo
            while let Some(t) = self.s.pop_back() {
                if t.2 >= 2 {
                    self.m.push_front((t.0, t.1, 0));
                } else {
                    self.ghost_get(t.0, t.1);
                    return;
                }
            }
        }
    }
}
impl Model for NaiveS3Lcs {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(e) = self.s.iter_mut().find(|e| e.0 == id) {
            e.2 = e.2.saturating_add(1);
            return true;
        }
        let ghost_hit = match self.g.iter().position(|e| e.0 == id) {
            Some(i) => {
                self.g.remove(i);
                true
            }
            None => false,
        };
        if let Some(e) = self.m.iter_mut().find(|e| e.0 == id) {
            e.2 = e.2.saturating_add(1);
            return true;
        }
        if u64::from(w) > self.s_cap {
            return false;
        }
        while used3(&self.s) + used3(&self.m) + u64::from(w) > self.cap {
            self.evict();
        }
        if ghost_hit {
            self.m.push_front((id, w, 0));
        } else if u64::from(w) < self.s_cap {
            if !self.has_evicted && used3(&self.s) >= self.s_cap {
                self.m.push_front((id, w, 0));
            } else {
                self.s.push_front((id, w, 0));
            }
        }
        false
    }
}

/// LIRS from the paper's three cases, on vectors: S top first (a non-resident entry is an S
/// entry whose id is not resident), Q newest first, and the order entries became
/// non-resident (for the 2 C bound on S).
pub(super) struct NaiveLirs {
    s: Vec<(u64, u32)>,
    res: Vec<(u64, u32, bool)>,
    q: VecDeque<u64>,
    nr: Vec<u64>,
    cap: u64,
    h: u64,
}
impl NaiveLirs {
    pub(super) fn new(cap: u64) -> Self {
        let h = ((cap as f64 * 0.01) as u64).max(1);
        NaiveLirs {
            s: Vec::new(),
            res: Vec::new(),
            q: VecDeque::new(),
            nr: Vec::new(),
            cap,
            h,
        }
    }
    fn res_of(&mut self, id: u64) -> Option<&mut (u64, u32, bool)> {
        self.res.iter_mut().find(|e| e.0 == id)
    }
    fn lir_w(&self) -> u64 {
        self.res
            .iter()
            .filter(|e| e.2)
            .map(|e| u64::from(e.1))
            .sum()
    }
    fn prune(&mut self) {
        while let Some(&(id, _)) = self.s.last() {
            if self.res.iter().any(|e| e.0 == id && e.2) {
                return;
            }
            self.s.pop();
            self.nr.retain(|&x| x != id);
        }
    }
    fn demote(&mut self) {
        self.prune();
        let (id, _) = self.s.pop().unwrap();
        self.res_of(id).unwrap().2 = false;
        self.q.push_front(id);
        self.prune();
    }
    fn make_lir(&mut self, id: u64) {
        self.res_of(id).unwrap().2 = true;
        while self.lir_w() > self.cap - self.h {
            self.demote();
        }
    }
    fn raise(&mut self, id: u64, w: u32) {
        self.s.retain(|e| e.0 != id);
        self.s.insert(0, (id, w));
    }
    fn bound(&mut self) {
        while self.s.iter().map(|e| u64::from(e.1)).sum::<u64>() > 2 * self.cap
            && !self.nr.is_empty()
        {
            let id = self.nr.remove(0);
            self.s.retain(|e| e.0 != id);
            self.prune();
        }
    }
}
impl Model for NaiveLirs {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(&(_, rw, lir)) = self.res.iter().find(|e| e.0 == id) {
            let in_s = self.s.iter().any(|e| e.0 == id);
            if lir {
                let bottom = self.s.last().unwrap().0 == id;
                self.raise(id, rw);
                if bottom {
                    self.prune();
                }
            } else if in_s {
                self.raise(id, rw);
                self.q.retain(|&x| x != id);
                self.make_lir(id);
            } else {
                self.raise(id, rw);
                self.q.retain(|&x| x != id);
                self.q.push_front(id);
                self.bound();
            }
            return true;
        }
        if u64::from(w) > self.h {
            return false;
        }
        while self.res.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.cap {
            if self.q.is_empty() {
                self.demote();
            }
            let v = self.q.pop_back().unwrap();
            self.res.retain(|e| e.0 != v);
            if self.s.iter().any(|e| e.0 == v) {
                self.nr.push(v);
            }
        }
        let nonresident = self.s.iter().any(|e| e.0 == id);
        self.res.push((id, w, false));
        self.raise(id, w);
        if nonresident {
            self.nr.retain(|&x| x != id);
            self.make_lir(id);
        } else if self.lir_w() + u64::from(w) <= self.cap - self.h {
            self.make_lir(id);
        } else {
            self.q.push_front(id);
        }
        self.bound();
        false
    }
}

/// LIRS as libCacheSim's `LIRS.c` runs it, on vectors: S, Q and the non-resident list each an
/// LRU list of (id, weight, lir, resident) with the newest first.
pub(super) struct NaiveLirsLcs {
    s: VecDeque<(u64, u32, bool, bool)>,
    q: VecDeque<(u64, u32)>,
    nh: VecDeque<u64>,
    lirs: i64,
    hirs: i64,
    occupied: i64,
    lirs_limit: i64,
    hirs_limit: i64,
    cap: i64,
}
impl NaiveLirsLcs {
    pub(super) fn new(cap: u64) -> Self {
        let h = ((0.01 * cap as f64) as u64).max(1) as i64;
        NaiveLirsLcs {
            s: VecDeque::new(),
            q: VecDeque::new(),
            nh: VecDeque::new(),
            lirs: 0,
            hirs: 0,
            occupied: 0,
            lirs_limit: cap as i64 - h,
            hirs_limit: h,
            cap: cap as i64,
        }
    }
    /// The non-resident list may hold an id twice; a removal takes the newest.
    fn nh_remove(&mut self, id: u64) {
        if let Some(i) = self.nh.iter().position(|&x| x == id) {
            self.nh.remove(i);
        }
    }
    fn s_pos(&self, id: u64) -> Option<usize> {
        self.s.iter().position(|e| e.0 == id)
    }
    fn q_pos(&self, id: u64) -> Option<usize> {
        self.q.iter().position(|e| e.0 == id)
    }
    fn prune(&mut self) {
        while self.s.len() > 1 {
            let &(id, _, lir, res) = self.s.back().unwrap();
            if lir {
                break;
            }
            if !res {
                self.nh_remove(id);
            }
            self.s.pop_back();
        }
    }
    fn evict_hir(&mut self) {
        let Some((id, w)) = self.q.pop_back() else {
            return;
        };
        self.hirs -= i64::from(w);
        if let Some(i) = self.s_pos(id) {
            self.s[i].3 = false;
            self.nh.push_front(id);
        }
        self.occupied -= i64::from(w);
    }
    fn evict_lir(&mut self) {
        let Some((id, w, _, _)) = self.s.pop_back() else {
            return;
        };
        self.lirs -= i64::from(w);
        self.occupied -= i64::from(w);
        if i64::from(w) <= self.hirs_limit {
            while self.hirs + i64::from(w) > self.hirs_limit && !self.q.is_empty() {
                self.evict_hir();
            }
            self.q.retain(|e| e.0 != id);
            self.q.push_front((id, w));
            self.hirs += i64::from(w);
            self.occupied += i64::from(w);
        }
        self.prune();
    }
    fn lir_room(&mut self, w: i64) {
        while self.lirs + w > self.lirs_limit && !self.s.is_empty() {
            self.evict_lir();
        }
    }
    fn get(&mut self, id: u64, w: u32) -> bool {
        let wi = i64::from(w);
        if let Some(i) = self.s_pos(id) {
            let e = self.s.remove(i).unwrap();
            self.s.push_front(e);
        }
        if let Some(i) = self.q_pos(id) {
            let e = self.q.remove(i).unwrap();
            self.q.push_front(e);
        }
        let (in_s, in_q) = (
            self.s_pos(id).map(|i| self.s[i]),
            self.q_pos(id).map(|i| self.q[i]),
        );
        match (in_s, in_q) {
            (Some((_, _, true, _)), _) => {
                self.prune();
                return true;
            }
            (Some((_, sw, false, true)), q) => {
                if let Some((_, qw)) = q {
                    self.hirs -= i64::from(qw);
                    self.q.retain(|e| e.0 != id);
                    self.occupied -= i64::from(qw);
                }
                self.lir_room(i64::from(sw));
                if let Some(i) = self.s_pos(id) {
                    self.s[i].2 = true;
                }
                self.lirs += i64::from(sw);
                self.occupied += i64::from(sw);
                return true;
            }
            (None, Some((_, qw))) => {
                // The size is re-read through memory the demotions may free and the next Q
                // entry reuses (see lirs.rs).
                let mut cur = i64::from(qw);
                while self.lirs + cur > self.lirs_limit && !self.s.is_empty() {
                    self.evict_lir();
                    if self.q_pos(id).is_none()
                        && let Some(&(_, w)) = self.q.front()
                    {
                        cur = i64::from(w);
                    }
                }
                self.s.push_front((id, qw, false, true));
                return true;
            }
            _ => {}
        }
        if wi > self.cap {
            return false;
        }
        if let Some((_, sw, _, _)) = in_s {
            self.lir_room(i64::from(sw));
            self.nh_remove(id);
        } else if wi > self.lirs_limit || wi > self.hirs_limit {
            return false;
        } else if self.lirs + wi > self.lirs_limit && self.hirs + wi > self.hirs_limit {
            while self.hirs + wi > self.hirs_limit && !self.q.is_empty() {
                self.evict_hir();
            }
        }
        while self.occupied + wi > self.cap {
            let before = (self.occupied, self.lirs, self.hirs);
            match self.s_pos(id).map(|i| self.s[i]) {
                Some((_, _, false, false)) => {
                    while self.hirs >= self.hirs_limit && !self.q.is_empty() {
                        self.evict_hir();
                    }
                    self.evict_lir();
                }
                None if self.q_pos(id).is_none()
                    && self.lirs + wi > self.lirs_limit
                    && self.hirs + wi > self.hirs_limit =>
                {
                    self.evict_hir();
                }
                _ => {}
            }
            if before == (self.occupied, self.lirs, self.hirs) {
                break;
            }
        }
        match self.s_pos(id) {
            Some(i) if !self.s[i].2 && !self.s[i].3 => {
                self.s[i].2 = true;
                self.s[i].3 = true;
                self.lirs += i64::from(self.s[i].1);
                self.occupied += i64::from(self.s[i].1);
            }
            Some(_) => {}
            None if self.q_pos(id).is_none() => {
                if self.lirs + wi <= self.lirs_limit {
                    self.s.push_front((id, w, true, true));
                    self.lirs += wi;
                } else {
                    self.s.push_front((id, w, false, true));
                    self.q.push_front((id, w));
                    self.hirs += wi;
                }
                self.occupied += wi;
            }
            None => {}
        }
        false
    }
}
impl Model for NaiveLirsLcs {
    fn access(&mut self, id: u64, w: u32) -> bool {
        let hit = self.get(id, w);
        while self.s.iter().map(|e| i64::from(e.1)).sum::<i64>() > 2 * self.cap {
            let Some(old) = self.nh.pop_back() else { break };
            self.s.retain(|e| e.0 != old);
        }
        hit
    }
}
