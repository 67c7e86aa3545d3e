package dev.sluice.peers.nexmark;

/** A person registering (Sluice's nexmark::Person; fields in its order). A Flink POJO. */
public final class Person {
  public long id;
  public String name;
  public String emailAddress;
  public String creditCard;
  public String city;
  public String state;
  public long dateTime; // event time, ms
  public String extra;

  public Person() {}
}
