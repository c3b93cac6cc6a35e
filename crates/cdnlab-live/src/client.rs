//! GWTW users on real HTTP (to come in the next step).
