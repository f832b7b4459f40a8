// Messages between the player panel and its page (see the player issue).
export {};
