//! Solve a Transportation Problem (server capacities to user populations), read its duals,
//! then re-allocate after a demand shift starting from the first optimum's basis.
//!
//!     cargo run --release -p cdnlab --example tp_warm

use cdnlab::alloc::problem::Balance;
use cdnlab::alloc::{Problem, simplex};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 3 server sites (supplies) and 4 populations (demands); cost = distance.
    let supply = vec![50, 30, 40];
    let demand = vec![30, 25, 35, 30];
    let cost = vec![vec![2, 7, 9, 4], vec![6, 1, 5, 8], vec![9, 6, 2, 3]];
    let p = Problem::new(supply.clone(), demand.clone(), cost.clone())?;
    let s = simplex::solve(&p)?;
    s.certify(&p)?; // feasibility, dual feasibility and complementary slackness, checked
    println!("optimal cost {} ({} pivots)", s.allocation.cost, s.pivots);
    for (i, j, x) in &s.allocation.flows {
        println!("  site {i} -> population {j}: {x}");
    }
    println!("site prices u = {:?}, population prices v = {:?}", s.u, s.v);

    // Population 2 grows by 10: the totals differ, so balance with a dummy site of cost 0
    // (demand that cannot be served) ... or give the sites more capacity, as here.
    let grown = vec![30, 25, 45, 30];
    let p2 = Problem::new(vec![50, 30, 50], grown.clone(), cost.clone())?;
    let warm = simplex::solve_warm(&p2, &s.basis)?;
    let cold = simplex::solve(&p2)?;
    assert_eq!(warm.allocation.cost, cold.allocation.cost);
    println!(
        "re-allocated: cost {} in {} pivots warm ({} cold)",
        warm.allocation.cost, warm.pivots, cold.pivots
    );

    // Unequal totals are an error unless a balancing rule is named.
    assert!(Problem::new(supply.clone(), grown.clone(), cost.clone()).is_err());
    let dummy = Problem::balanced(supply, grown, cost, Balance::Dummy)?;
    println!(
        "with a dummy site for the unserved demand: {} x {}, cost {}",
        dummy.rows(),
        dummy.cols(),
        simplex::solve(&dummy)?.allocation.cost
    );
    Ok(())
}
