// The player page (see the player issue).
export {};
